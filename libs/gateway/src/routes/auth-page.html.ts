/** Server-rendered pages of the sign-in flow. Plain HTML forms: no script needed to sign in. */
export const escape = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);

export function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(title)} · Knowledge Box Service</title>
<style>
 body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;background:#f5f6f8;margin:0;display:flex;min-height:100vh;align-items:center;justify-content:center}
 main{background:#fff;padding:2rem 2.5rem;border-radius:12px;box-shadow:0 2px 12px rgba(0,0,0,.08);width:min(420px,92vw)}
 h1{font-size:1.3rem;margin:0 0 1.2rem} label{display:block;font-size:.9rem;margin:.8rem 0 .3rem}
 input{width:100%;box-sizing:border-box;padding:.6rem;border:1px solid #c8ccd2;border-radius:6px;font-size:1rem}
 button,.button{margin-top:1.2rem;width:100%;padding:.7rem;border:0;border-radius:6px;background:#2f5bea;color:#fff;font-size:1rem;cursor:pointer;text-align:center;text-decoration:none;display:block}
 .secondary{background:#e8ebf0;color:#222} .error{background:#fdecec;color:#8a1c1c;padding:.6rem;border-radius:6px}
 code{display:block;word-break:break-all;background:#f0f2f5;padding:.7rem;border-radius:6px;font-size:.85rem}
 p.small{font-size:.85rem;color:#555}
</style></head><body><main>${body}</main></body></html>`;
}

export const errorBox = (error?: string) => (error ? `<p class="error" role="alert">${escape(error)}</p>` : '');

export function emailStep(error?: string): string {
  return page(
    'Sign in',
    `<h1>Sign in</h1>${errorBox(error)}
<form method="post" action="/auth">
 <label for="email">E-mail address</label><input id="email" name="email" type="email" autocomplete="username" required autofocus>
 <button type="submit">Continue</button>
</form>`,
  );
}

export function passwordStep(email: string, error?: string): string {
  const e = escape(email);
  return page(
    'Sign in',
    `<h1>Sign in</h1>${errorBox(error)}
<form method="post" action="/auth/login">
 <label for="email">E-mail address</label><input id="email" name="email" type="email" value="${e}" autocomplete="username" required>
 <label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required autofocus>
 <button type="submit">Sign in</button>
</form>
<form method="post" action="/auth/signup-form"><input type="hidden" name="email" value="${e}"><button class="secondary" type="submit">Create an account instead</button></form>`,
  );
}

export function signUpStep(email: string, error?: string): string {
  return page(
    'Create an account',
    `<h1>Create an account</h1>${errorBox(error)}
<form method="post" action="/auth/signup">
 <label for="email">E-mail address</label><input id="email" name="email" type="email" value="${escape(email)}" autocomplete="username" required>
 <label for="name">Name</label><input id="name" name="name" autocomplete="name">
 <label for="password">Password (10 characters or more)</label><input id="password" name="password" type="password" minlength="10" autocomplete="new-password" required>
 <button type="submit">Create account</button>
</form>`,
  );
}

export function ssoStep(email: string, loginUrl: string): string {
  return page(
    'Single sign-on',
    `<h1>Single sign-on</h1>
<p>${escape(email)} signs in through your organisation's identity provider.</p>
<a class="button" id="sso" href="${escape(loginUrl)}">Continue with single sign-on</a>`,
  );
}

export function tokenPage(token: string, expires: string): string {
  return page(
    'Signed in',
    `<h1>Signed in</h1>
<p>Your user token (send it as <strong>Authorization: Bearer &lt;token&gt;</strong>):</p>
<code id="token">${escape(token)}</code>
<p class="small">It expires at <time id="expires" datetime="${escape(expires)}">${escape(expires)}</time>. For scripts and tools that need longer access, create a personal access token with <code style="display:inline">POST /api/v1/user/pa_tokens</code>.</p>`,
  );
}
