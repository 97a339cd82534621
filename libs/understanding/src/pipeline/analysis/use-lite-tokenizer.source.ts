/**
 * JavaScript (a string, run in the embedding worker: see use-lite-worker.source.ts) that replaces
 * the packaged USE-lite tokenizer's `encode` on a loaded model with one giving the same token ids
 * at a fraction of the cost.
 *
 * `@energetic-ai/embeddings`' SentencePiece encoder looks up the pieces starting at each symbol of
 * the text with `trie.commonPrefixSearch(symbols.slice(i))`: a copy of the rest of the text per
 * symbol, O(n²) in the text's length (a ~1,500-character abstract copies ~1.1 M array slots, ~8 %
 * of the model thread's time with the garbage it leaves), and keeps the lattice as objects with
 * integer keys visited by `for…in` (more garbage). This walks the same trie from offset `i` and
 * scores each piece as it is found; normalisation, the tie rule of the best-score pass, the
 * backtrace and the merging of unknown pieces are the package's (its version is pinned). A spec
 * checks the ids are identical to the package's own encoder on varied texts and edge cases.
 *
 * Defines `installFastEncode(tokenizer)`: true once installed, false (the package's encoder kept)
 * when the tokenizer is not the shape this was written for.
 */
export const USE_LITE_TOKENIZER_SOURCE = String.raw`
function installFastEncode(tokenizer) {
  const trie = tokenizer.trie;
  const vocabulary = tokenizer.vocabulary;
  // Another version of the package: its own encoder stays (slower, never wrong).
  if (!trie || !trie.root || !Array.isArray(vocabulary) || typeof tokenizer.encode !== 'function') return false;
  const separator = '\u2581';
  tokenizer.encode = function encode(input) {
    const normalized = input.normalize('NFKC');
    const processed = normalized.length > 0 ? separator + normalized.replace(/ /g, separator) : normalized;
    const symbols = [];
    for (const symbol of processed) symbols.push(symbol);
    const n = symbols.length;
    const words = new Array(n + 1).fill(0);
    const best = new Array(n + 1).fill(0);
    // The package builds the lattice (every piece, by where it ends and starts), then visits each end
    // position's pieces by ascending start. best[i] is final once every piece ending at i has been
    // seen, and those all start before i: visiting the pieces by ascending start, each as soon as it
    // is found, makes the same comparisons in the same order (ties included) with no lattice kept.
    for (let i = 0; i < n; i++) {
      const from = best[i];
      let matched = false;
      let node = trie.root.children[symbols[i]];
      // trie.commonPrefixSearch(symbols.slice(i)), walked in place: a piece of k - i + 1 symbols ends at k + 1.
      for (let k = i; k < n && node; k++) {
        if (node.end) {
          matched = true;
          const end = k + 1;
          const score = node.word[1] + from;
          if (best[end] === 0 || score >= best[end]) {
            best[end] = score;
            words[end] = node.word[2];
          }
        }
        node = node.children[symbols[k + 1]];
      }
      // No piece starts here: the symbol alone, unknown (index 0, score 0).
      if (!matched && (best[i + 1] === 0 || from >= best[i + 1])) {
        best[i + 1] = from;
        words[i + 1] = 0;
      }
    }
    const results = [];
    let iter = words.length - 1;
    while (iter > 0) {
      results.push(words[iter]);
      iter -= vocabulary[words[iter]][0].length;
    }
    const merged = [];
    let isPreviousUnk = false;
    for (let i = 0; i < results.length; i++) {
      const id = results[i];
      if (!(isPreviousUnk && id === 0)) merged.push(id);
      isPreviousUnk = id === 0;
    }
    return merged.reverse();
  };
  return true;
}
`;
