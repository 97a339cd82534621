import { errorBox, escape, page } from './auth-page.html';

export function invitePage(token: string, error?: string): string {
  const t = escape(token);
  return page(
    'Accept an invitation',
    `<h1>Accept the invitation</h1>${errorBox(error)}
<p class="small">Sign in, or create an account, with the e-mail address the invitation was sent to.</p>
<form method="post" action="/auth/invite/login">
 <input type="hidden" name="token" value="${t}">
 <label for="email">E-mail address</label><input id="email" name="email" type="email" autocomplete="username" required>
 <label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
 <button type="submit">Sign in and accept</button>
</form>
<form method="post" action="/auth/invite/signup">
 <input type="hidden" name="token" value="${t}">
 <label for="su-email">New here? E-mail address</label><input id="su-email" name="email" type="email" autocomplete="username" required>
 <label for="su-name">Name</label><input id="su-name" name="name" autocomplete="name">
 <label for="su-password">Password (10 characters or more)</label><input id="su-password" name="password" type="password" minlength="10" autocomplete="new-password" required>
 <button class="secondary" type="submit">Create an account and accept</button>
</form>`,
  );
}

export function inviteAcceptedPage(role: string, token: string, expires: string): string {
  return page(
    'Invitation accepted',
    `<h1>Invitation accepted</h1>
<p>You now have the role <strong id="role">${escape(role)}</strong>.</p>
<p>Your user token:</p><code id="token">${escape(token)}</code>
<p class="small">It expires at <time id="expires" datetime="${escape(expires)}">${escape(expires)}</time>.</p>`,
  );
}
