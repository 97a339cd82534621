import type { EmbedderFactory } from '../../understanding.tokens';
import { createEmbedder } from './create-embedder';
import type { Embedder } from './embedder';

let builtInEmbedder: Embedder | undefined;

/** One built-in embedder for the whole process (the model loads once), shared by every KB that uses it. */
export const defaultEmbedderFactory: EmbedderFactory = () => (builtInEmbedder ??= createEmbedder());
