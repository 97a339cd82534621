import { AccountsInitial1763800000000 } from './1763800000000-accounts-initial';
import { UsersSignIn1763810000000 } from './1763810000000-users-sign-in';
import { AccountSettings1763820000000 } from './1763820000000-account-settings';
import { Invites1763825000000 } from './1763825000000-invites';
import { NuaClients1763827000000 } from './1763827000000-nua-clients';
import { Saml1763830000000 } from './1763830000000-saml';
import { SsoIdentities1763840000000 } from './1763840000000-sso-identities';
import { SignInThrottle1764300000000 } from './1764300000000-sign-in-throttle';
import { Outbox1764900000000 } from './1764900000000-outbox';

export const ACCOUNTS_MIGRATIONS = [
  AccountsInitial1763800000000,
  UsersSignIn1763810000000,
  AccountSettings1763820000000,
  Invites1763825000000,
  NuaClients1763827000000,
  Saml1763830000000,
  SsoIdentities1763840000000,
  SignInThrottle1764300000000,
  Outbox1764900000000,
];
