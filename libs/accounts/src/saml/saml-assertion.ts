import { Parser, processors } from 'xml2js';
import type { AccountEntity } from '../entities/account.entity';
import { isEmailAddress } from './email-address';

const BEARER = 'urn:oasis:names:tc:SAML:2.0:cm:bearer';
/** Attribute names IdPs commonly put the e-mail address in, when the NameID is not an address. */
const EMAIL_ATTRIBUTES = [
  'email',
  'mail',
  'emailaddress',
  'urn:oid:0.9.2342.19200300.100.1.3',
  'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress',
];

/** One account's identity provider, from saml_config or the older single-provider columns. */
export interface IdpConfig {
  domains: string[];
  ssoUrl: string;
  entityId: string;
  cert: string;
  authnContext: string;
}

export function idpConfigOf(account: AccountEntity): IdpConfig | null {
  const c = account.samlConfig;
  if (c) {
    return {
      domains: c.domains.map((d) => d.toLowerCase()),
      ssoUrl: c.sso_url,
      entityId: c.entity_id,
      cert: c.x509_cert,
      authnContext: c.authn_context ?? 'exact',
    };
  }
  if (account.samlEntityId && account.samlSsoUrl && account.samlX509Cert && account.domain) {
    return {
      domains: [account.domain.toLowerCase()],
      ssoUrl: account.samlSsoUrl,
      entityId: account.samlEntityId,
      cert: account.samlX509Cert,
      authnContext: 'exact',
    };
  }
  return null;
}

export function emailDomain(email: string): string | null {
  const at = email.lastIndexOf('@');
  return at > 0 && at < email.length - 1 ? email.slice(at + 1).toLowerCase() : null;
}

/** What the SP reads from an assertion whose signature node-saml has already verified. */
export interface AssertionFacts {
  id: string;
  issuer: string | null;
  /** Recipients of the bearer subject confirmations. */
  recipients: string[];
  /** Latest NotOnOrAfter the assertion carries (how long its id must be remembered). */
  notOnOrAfter: Date | null;
  email: string | null;
  /**
   * Who the IdP says this is, as the identity key: the NameID (lower-cased when it is an e-mail
   * address, as IdPs vary its case), or the e-mail address when the NameID is empty.
   */
  subject: string | null;
  name: string;
}

/** An element as xml2js gives it: attributes in `$`, text in `_`, children by local name. */
interface XmlNode {
  $?: Record<string, string>;
  _?: string;
  [child: string]: XmlNode[] | Record<string, string> | string | undefined;
}

/** Reads the facts from the verified assertion XML (never from the unsigned envelope). */
export async function readAssertion(assertionXml: string): Promise<AssertionFacts> {
  const assertion = (await parseXml(assertionXml))['Assertion']?.[0];
  if (!assertion) throw new Error('the signed element is not an Assertion');
  const subject = kids(assertion, 'Subject')[0];
  const confirmations = subject ? kids(subject, 'SubjectConfirmation').filter((c) => c.$?.['Method'] === BEARER) : [];
  const data = confirmations.flatMap((c) => kids(c, 'SubjectConfirmationData'));
  const expiries = [...data, ...kids(assertion, 'Conditions')]
    .map((e) => e.$?.['NotOnOrAfter'])
    .filter((v): v is string => !!v)
    .map((v) => new Date(v))
    .filter((d) => !Number.isNaN(d.getTime()));
  const attributes = new Map<string, string>();
  for (const statement of kids(assertion, 'AttributeStatement')) {
    for (const attr of kids(statement, 'Attribute')) {
      const value = text(kids(attr, 'AttributeValue')[0]);
      if (value) attributes.set((attr.$?.['Name'] ?? '').toLowerCase(), value);
    }
  }
  const nameId = subject ? (text(kids(subject, 'NameID')[0]) ?? '') : '';
  const fromAttributes = EMAIL_ATTRIBUTES.map((n) => attributes.get(n)).find((v) => v && isEmailAddress(v));
  const nameIdIsEmail = isEmailAddress(nameId);
  const email = nameIdIsEmail ? nameId : (fromAttributes ?? null);
  const name =
    attributes.get('displayname') ??
    attributes.get('name') ??
    [attributes.get('givenname'), attributes.get('sn') ?? attributes.get('surname')].filter(Boolean).join(' ');
  return {
    id: assertion.$?.['ID'] ?? '',
    issuer: text(kids(assertion, 'Issuer')[0]),
    recipients: data.map((d) => d.$?.['Recipient'] ?? ''),
    notOnOrAfter: expiries.length > 0 ? new Date(Math.max(...expiries.map((d) => d.getTime()))) : null,
    email: email?.toLowerCase() ?? null,
    subject: (nameIdIsEmail ? nameId.toLowerCase() : nameId.slice(0, 1024)) || (email?.toLowerCase() ?? null),
    name: name.slice(0, 256),
  };
}

/** The Destination of the Response envelope (null when absent). */
export async function responseDestination(responseXml: string): Promise<string | null> {
  return (await parseXml(responseXml))['Response']?.[0]?.$?.['Destination'] || null;
}

async function parseXml(xml: string): Promise<Record<string, XmlNode[] | undefined>> {
  // Same shape as node-saml's own parse: explicit root, text under `_`, namespace prefixes stripped.
  const parser = new Parser({
    explicitRoot: true,
    explicitCharkey: true,
    explicitArray: true,
    tagNameProcessors: [processors.stripPrefix],
  });
  const root = (await parser.parseStringPromise(xml)) as Record<string, XmlNode | undefined>;
  return Object.fromEntries(Object.entries(root).map(([k, v]) => [k, v ? [v] : undefined]));
}

function kids(node: XmlNode, name: string): XmlNode[] {
  const v = node[name];
  return Array.isArray(v) ? v.filter((c): c is XmlNode => typeof c === 'object' && c !== null) : [];
}

function text(node: XmlNode | undefined): string | null {
  const t = node?._?.trim();
  return t ? t : null;
}
