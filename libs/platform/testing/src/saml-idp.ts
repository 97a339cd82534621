import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inflateRawSync } from 'node:zlib';
import { generate } from 'selfsigned';
import { SignedXml } from 'xml-crypto';

/**
 * A SAML 2.0 identity provider for tests: a key pair with a self-signed certificate, Responses built
 * and signed the way IdPs sign them (enveloped, exclusive c14n, RSA-SHA256), and an HTTP endpoint
 * answering an HTTP-Redirect AuthnRequest with an auto-posting form (the HTTP-POST binding).
 */
export interface TestIdp {
  entityId: string;
  privateKey: string;
  /** PEM certificate, as an account's saml_config.x509_cert holds it. */
  cert: string;
}

export async function createTestIdp(entityId = 'https://idp.test/metadata'): Promise<TestIdp> {
  const pems = await generate([{ name: 'commonName', value: 'test-idp' }], { keySize: 2048, algorithm: 'sha256' });
  return { entityId, privateKey: pems.private, cert: pems.cert };
}

export interface AuthnRequestInfo {
  id: string;
  acsUrl: string;
  issuer: string;
  relayState: string | null;
  xml: string;
}

/** Reads the AuthnRequest from an HTTP-Redirect URL (deflated, base64, in `SAMLRequest`). */
export function readAuthnRequest(redirectUrl: string): AuthnRequestInfo {
  const url = new URL(redirectUrl);
  const encoded = url.searchParams.get('SAMLRequest');
  if (!encoded) throw new Error(`no SAMLRequest in ${redirectUrl}`);
  const xml = inflateRawSync(Buffer.from(encoded, 'base64')).toString('utf8');
  const attr = (name: string) => new RegExp(`\\s${name}="([^"]*)"`).exec(xml)?.[1] ?? '';
  return {
    id: attr('ID'),
    acsUrl: attr('AssertionConsumerServiceURL'),
    issuer: /<saml:Issuer[^>]*>([^<]*)</.exec(xml)?.[1] ?? '',
    relayState: url.searchParams.get('RelayState'),
    xml,
  };
}

export interface SamlResponseOptions {
  inResponseTo: string;
  email: string;
  /** Our ACS URL: the Response's Destination and the bearer confirmation's Recipient. */
  acsUrl: string;
  /** Our SP entity id. */
  audience: string;
  recipient?: string;
  destination?: string;
  issuer?: string;
  assertionId?: string;
  notBefore?: Date;
  notOnOrAfter?: Date;
  /** Which element carries the signature (default: the assertion). */
  sign?: 'assertion' | 'response' | 'both';
  /** Key that signs (default: the IdP's own; another key gives a wrong signature). */
  signingKey?: string;
  attributes?: Record<string, string>;
}

const esc = (s: string) => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] as string);

/** The unsigned Response XML; `signSamlResponse` signs it. Split so tests can tamper after signing. */
export function samlResponseXml(idp: TestIdp, o: SamlResponseOptions): string {
  const now = new Date();
  const notBefore = (o.notBefore ?? new Date(now.getTime() - 60_000)).toISOString();
  const notOnOrAfter = (o.notOnOrAfter ?? new Date(now.getTime() + 5 * 60_000)).toISOString();
  const issuer = esc(o.issuer ?? idp.entityId);
  const assertionId = o.assertionId ?? `_a${randomBytes(16).toString('hex')}`;
  const attributes = Object.entries(o.attributes ?? { email: o.email })
    .map(([name, value]) => `<saml:Attribute Name="${esc(name)}"><saml:AttributeValue>${esc(value)}</saml:AttributeValue></saml:Attribute>`)
    .join('');
  return (
    `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="_r${randomBytes(16).toString('hex')}" Version="2.0" IssueInstant="${now.toISOString()}" Destination="${esc(o.destination ?? o.acsUrl)}" InResponseTo="${esc(o.inResponseTo)}">` +
    `<saml:Issuer>${issuer}</saml:Issuer>` +
    `<samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>` +
    `<saml:Assertion xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${assertionId}" Version="2.0" IssueInstant="${now.toISOString()}">` +
    `<saml:Issuer>${issuer}</saml:Issuer>` +
    `<saml:Subject><saml:NameID Format="urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress">${esc(o.email)}</saml:NameID>` +
    `<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"><saml:SubjectConfirmationData InResponseTo="${esc(o.inResponseTo)}" NotOnOrAfter="${notOnOrAfter}" Recipient="${esc(o.recipient ?? o.acsUrl)}"/></saml:SubjectConfirmation></saml:Subject>` +
    `<saml:Conditions NotBefore="${notBefore}" NotOnOrAfter="${notOnOrAfter}"><saml:AudienceRestriction><saml:Audience>${esc(o.audience)}</saml:Audience></saml:AudienceRestriction></saml:Conditions>` +
    `<saml:AuthnStatement AuthnInstant="${now.toISOString()}" SessionIndex="_s${randomBytes(8).toString('hex')}"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>` +
    `<saml:AttributeStatement>${attributes}</saml:AttributeStatement>` +
    `</saml:Assertion></samlp:Response>`
  );
}

function signElement(xml: string, element: 'Assertion' | 'Response', key: string, cert: string): string {
  const sig = new SignedXml({
    privateKey: key,
    publicCert: cert,
    signatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
    canonicalizationAlgorithm: 'http://www.w3.org/2001/10/xml-exc-c14n#',
  });
  const target = `//*[local-name(.)='${element}']`;
  sig.addReference({
    xpath: target,
    transforms: ['http://www.w3.org/2000/09/xmldsig#enveloped-signature', 'http://www.w3.org/2001/10/xml-exc-c14n#'],
    digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha256',
  });
  // The schema puts ds:Signature right after the element's Issuer.
  sig.computeSignature(xml, { location: { reference: `${target}/*[local-name(.)='Issuer']`, action: 'after' } });
  return sig.getSignedXml();
}

export function signSamlResponse(idp: TestIdp, xml: string, o: Pick<SamlResponseOptions, 'sign' | 'signingKey'> = {}): string {
  const key = o.signingKey ?? idp.privateKey;
  const sign = o.sign ?? 'assertion';
  let out = xml;
  if (sign === 'assertion' || sign === 'both') out = signElement(out, 'Assertion', key, idp.cert);
  if (sign === 'response' || sign === 'both') out = signElement(out, 'Response', key, idp.cert);
  return out;
}

/** A signed Response, base64 as the `SAMLResponse` form member carries it. */
export function buildSamlResponse(idp: TestIdp, o: SamlResponseOptions): string {
  return Buffer.from(signSamlResponse(idp, samlResponseXml(idp, o), o), 'utf8').toString('base64');
}

export interface TestIdpServer {
  /** saml_config.sso_url */
  ssoUrl: string;
  /** AuthnRequests received, newest last. */
  requests: AuthnRequestInfo[];
  /** The base64 SAMLResponses it posted back, in the same order. */
  responses: string[];
  close(): Promise<void>;
}

/**
 * Answers `GET /sso?SAMLRequest=…` as a real IdP would after its own login: an HTML form that posts
 * a signed Response for `email()` to the ACS URL named in the request, for the SP named by its Issuer.
 */
export async function startTestIdpServer(idp: TestIdp, email: () => string): Promise<TestIdpServer> {
  const requests: AuthnRequestInfo[] = [];
  const responses: string[] = [];
  const server: Server = createServer((req, res) => {
    try {
      const request = readAuthnRequest(`http://idp${req.url ?? '/'}`);
      requests.push(request);
      const response = buildSamlResponse(idp, {
        inResponseTo: request.id,
        email: email(),
        acsUrl: request.acsUrl,
        audience: request.issuer,
      });
      responses.push(response);
      const relay = request.relayState ? `<input type="hidden" name="RelayState" value="${esc(request.relayState)}">` : '';
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end(
        `<!doctype html><html><body onload="document.forms[0].submit()"><form method="post" action="${esc(request.acsUrl)}">` +
          `<input type="hidden" name="SAMLResponse" value="${response}">${relay}<noscript><button>Continue</button></noscript></form></body></html>`,
      );
    } catch (err) {
      res.writeHead(400, { 'Content-Type': 'text/plain' });
      res.end(String(err));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    ssoUrl: `http://127.0.0.1:${port}/sso`,
    requests,
    responses,
    close: () => new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve()))),
  };
}
