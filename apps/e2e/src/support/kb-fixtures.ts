import type { FakeLlmServer } from '@kb/platform/testing';
import { apiKey, bearer, type Credential, type HttpClient } from './http-client';
import type { Topology } from './topologies';

type Issue = { loc: (string | number)[] };

/** The distinct locations (`body.values.x`) of a 422 body's `detail`, sorted. */
export const issueLocs = (body: unknown): string[] => [...new Set((body as { detail: Issue[] }).detail.map((d) => d.loc.join('.')))].sort();

/** A KB of the bootstrap account with a reader key (SMEMBER), and the account's personal access token. */
export async function kbWithReader(
  topology: Topology,
  slug: string,
): Promise<{ pat: NonNullable<Credential>; reader: NonNullable<Credential>; kb: string; newKb: (slug: string) => Promise<string> }> {
  const http = topology.http;
  const boot = topology.bootstrap();
  const pat = bearer(boot.personal_access_token.token);
  const account = boot.account.id;
  const newKb = async (s: string) =>
    (await http.call<{ id: string }>('POST', `/api/v1/account/${account}/kbs`, { credential: pat, body: { slug: s } })).body.id;
  const kb = await newKb(slug);
  const sa = await http.call<{ id: string }>('POST', `/api/v1/account/${account}/kb/${kb}/service_accounts`, {
    credential: pat,
    body: { role: 'SMEMBER' },
  });
  const key = await http.call<{ token: string }>('POST', `/api/v1/account/${account}/kb/${kb}/service_account/${sa.body.id}/keys`, {
    credential: pat,
    body: { expires: new Date(Date.now() + 3600_000).toISOString() },
  });
  return { pat, reader: apiKey(key.body.token), kb, newKb };
}

/** Which generative model a test KB answers with: the built-in extractive one, or the fake provider server as OpenAI or Anthropic. */
export type AnsweringModel = 'offline' | 'openai' | 'anthropic';

/** A KB of the bootstrap account that answers with `model` (the provider's endpoints on `llm`): its id. */
export async function kbAnsweringWith(
  topology: Topology,
  pat: Credential,
  slug: string,
  model: AnsweringModel,
  llm?: FakeLlmServer,
): Promise<string> {
  const provider = (): FakeLlmServer => {
    if (!llm) throw new Error(`a KB answering with ${model} needs the fake provider server`);
    return llm;
  };
  const learning_configuration =
    model === 'openai'
      ? { generative_model: 'chatgpt-4o-mini', user_keys: { openai: { url: provider().openAiUrl, key: 'sk-chat', timeout_ms: 5000 } } }
      : model === 'anthropic'
        ? { generative_model: 'claude-3-5-haiku', user_keys: { anthropic: { url: provider().url, key: 'sk-ant', timeout_ms: 5000 } } }
        : {};
  const res = await topology.http.call<{ uuid?: string; id?: string }>('POST', `/api/v1/account/${topology.bootstrap().account.id}/kbs`, {
    credential: pat,
    body: { slug, title: slug, learning_configuration },
  });
  if (res.status !== 201) throw new Error(`creating KB ${slug} answered ${res.status}: ${JSON.stringify(res.body)}`);
  return (res.body.uuid ?? res.body.id) as string;
}

/** Waits until the resource `rid` of `kb` is PROCESSED. */
export const resourceProcessed = (http: HttpClient, credential: Credential, kb: string, rid: string): Promise<true> =>
  http.eventually(
    async () => {
      const r = await http.call<{ metadata: { status: string } }>('GET', `/api/v1/kb/${kb}/resource/${rid}`, { credential });
      return r.body.metadata?.status === 'PROCESSED' ? true : undefined;
    },
    90_000,
    'the resource processed',
  );

/** Exports `kb`, imports the archive into a new KB and waits for both: the new KB's id. */
export async function exportAndImport(http: HttpClient, pat: NonNullable<Credential>, kb: string): Promise<string> {
  const started = await http.call<{ export_id: string }>('POST', `/api/v1/kb/${kb}/export`, { credential: pat });
  if (started.status !== 200) throw new Error(`export answered ${started.status}`);
  const waitFor = (url: string) =>
    http.eventually(
      async () => {
        const s = await http.call<{ status: string }>('GET', url, { credential: pat });
        return s.body.status === 'finished' || s.body.status === 'errored' ? s.body.status : undefined;
      },
      120_000,
      url,
    );
  const exported = await waitFor(`/api/v1/kb/${kb}/export/${started.body.export_id}/status`);
  if (exported !== 'finished') throw new Error(`export ${exported}`);
  const download = await fetch(`${http.baseUrl}/api/v1/kb/${kb}/export/${started.body.export_id}`, {
    headers: { [pat.header]: pat.value },
  });
  const imported = await fetch(`${http.baseUrl}/api/v1/kbs/import`, {
    method: 'POST',
    headers: { [pat.header]: pat.value, 'content-type': 'binary/octet-stream' },
    body: Buffer.from(await download.arrayBuffer()),
  });
  if (imported.status !== 200) throw new Error(`import answered ${imported.status}`);
  const { kbid: copy, import_id: importId } = (await imported.json()) as { kbid: string; import_id: string };
  const done = await waitFor(`/api/v1/kb/${copy}/import/${importId}/status`);
  if (done !== 'finished') throw new Error(`import ${done}`);
  return copy;
}
