import { mkdtempSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeTinyOnnxModel } from '@kb/platform/testing';
import { dotProduct } from './embedder';
import { OnnxFolderEmbedder } from './onnx.embedder';

const TOPICS = {
  animals: ['cat', 'cats', 'dog', 'dogs', 'kitten', 'puppy', 'pets'],
  vehicles: ['car', 'engine', 'wheel', 'truck', 'brakes'],
  cooking: ['soup', 'oven', 'recipe', 'bread', 'salt'],
  prompts: ['query', 'passage', ':'],
};

describe('OnnxFolderEmbedder', () => {
  let dir: string;
  const open: OnnxFolderEmbedder[] = [];
  const embedder = (folder: string, extra: Partial<ConstructorParameters<typeof OnnxFolderEmbedder>[0]> = {}) => {
    const e = new OnnxFolderEmbedder({ model: 'local:tiny', folder, ...extra });
    open.push(e);
    return e;
  };

  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'onnx-embedder-'))));
  afterEach(async () => {
    await Promise.all(open.splice(0).map((e) => e.close()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('embeds texts of one topic close together and texts of other topics apart, normalised', async () => {
    const model = writeTinyOnnxModel(join(dir, 'm'), { topics: TOPICS });
    const e = embedder(model.folder);
    const [pets, kittens, cars] = await e.embedPassages(['the cats and the dogs', 'a kitten and a puppy', 'the car engine and a wheel']);
    expect(pets).toHaveLength(16);
    expect(dotProduct(pets as number[], pets as number[])).toBeCloseTo(1, 5);
    // No word in common, one topic: the semantic neighbour beats the other topic by far.
    expect(dotProduct(pets as number[], kittens as number[])).toBeGreaterThan(0.85);
    expect(dotProduct(pets as number[], cars as number[])).toBeLessThan(0.5);
    expect(e.dimensions).toBe(16);
    expect(e.similarity).toBe('COSINE');
  });

  it('gives each text the same vector whatever it is batched and padded with, in input order', async () => {
    const model = writeTinyOnnxModel(join(dir, 'm'), { topics: TOPICS });
    const texts = [
      'soup',
      'the oven and the bread and the salt of a recipe',
      'a truck',
      'cats',
      'the brakes of the car and the wheel of the truck',
    ];
    const batched = await embedder(model.folder, { maxBatch: 2 }).embedPassages(texts);
    const alone = embedder(model.folder);
    for (const [i, text] of texts.entries()) {
      const [single] = await alone.embedPassages([text]);
      (single as number[]).forEach((x, d) => expect(batched[i]?.[d]).toBeCloseTo(x, 5));
    }
  });

  it("applies the folder's prompts to queries and passages, and the catalogue's when the folder has none", async () => {
    const withPrompts = writeTinyOnnxModel(join(dir, 'p'), { topics: TOPICS, prompts: { query: 'query: ' } });
    const e = embedder(withPrompts.folder, { query_prompt: 'ignored ', passage_prompt: 'passage: ' });
    const [asQuery] = [await e.embedQuery('cats')];
    const [prompted, plain] = await embedder(join(dir, 'p')).embedPassages(['query: cats', 'cats']);
    expect(asQuery).toEqual(prompted);
    expect(asQuery).not.toEqual(plain);
    // The folder names no passage prompt: the catalogue's default applies.
    const [passage] = await e.embedPassages(['cats']);
    const [expected] = await embedder(join(dir, 'p')).embedPassages(['passage: cats']);
    expect(passage).toEqual(expected);
  });

  it('pools the first token when 1_Pooling/config.json says CLS', async () => {
    const model = writeTinyOnnxModel(join(dir, 'cls'), { topics: TOPICS, pooling: 'cls' });
    const [a, b] = await embedder(model.folder, { pooling: 'mean' }).embedPassages(['cats and dogs', 'the car engine']);
    // The stand-in network has no attention, so the [CLS] row is the same for every text.
    expect(a).toEqual(b);
  });

  it('cuts long texts to the model length, keeping the closing token', async () => {
    const model = writeTinyOnnxModel(join(dir, 'm'), { topics: TOPICS, maxLength: 8 });
    const e = embedder(model.folder);
    const long = 'cats dogs kitten puppy pets soup oven bread salt recipe truck car engine';
    const [cut, head] = await e.embedPassages([long, 'cats dogs kitten puppy pets soup']);
    expect(cut).toEqual(head);
  });

  it('reports an unusable folder as a non-retryable embedding failure and picks the folder up once it is fixed', async () => {
    const folder = join(dir, 'late');
    const e = embedder(folder, { size: 16 });
    await expect(e.embedQuery('cats')).rejects.toMatchObject({
      code: 'EMBEDDING_FAILED',
      details: { retryable: false },
      message: expect.stringContaining('does not exist'),
    });
    writeTinyOnnxModel(folder, { topics: TOPICS });
    unlinkSync(join(folder, 'tokenizer.json'));
    await expect(e.embedQuery('cats')).rejects.toThrow(/tokenizer\.json is missing/);
    writeTinyOnnxModel(folder, { topics: TOPICS });
    await expect(e.embedQuery('cats')).resolves.toHaveLength(16);
  });

  it('refuses a folder whose model has another vector length than the catalogue says', async () => {
    const model = writeTinyOnnxModel(join(dir, 'm'), { topics: TOPICS, dimensions: 8 });
    const e = embedder(model.folder, { size: 384 });
    expect(e.dimensions).toBe(384);
    await expect(e.embedPassages(['cats'])).rejects.toThrow(/8 dimensions, local:tiny has 384/);
  });

  it('refuses a graph that is not a text encoder', async () => {
    const model = writeTinyOnnxModel(join(dir, 'm'), { topics: TOPICS });
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(model.folder, 'onnx', 'model.onnx'), Buffer.from('not a model'));
    await expect(embedder(model.folder).embedQuery('cats')).rejects.toThrow(/ONNX graph cannot be loaded/);
  });

  it('fails calls after close', async () => {
    const model = writeTinyOnnxModel(join(dir, 'm'), { topics: TOPICS });
    const e = embedder(model.folder);
    await e.embedQuery('cats');
    await e.close();
    await expect(e.embedQuery('cats')).rejects.toThrow(/closed/);
  });
});
