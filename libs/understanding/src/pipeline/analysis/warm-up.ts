import { detectLanguage, languageModelLoaded } from './language';
import { analyseEnglish, englishPipelineLoaded } from './wink';

/**
 * Loads the models text analysis runs on the event loop: eld's language profiles (1.4 s) and
 * wink's English pipeline (0.3 s), measured on the busy 2-core machine (2026-11-28). Loaded on
 * first use they blocked a new worker's event loop for over 3 s while it held its first jobs, so
 * those jobs' "still working" heartbeats stopped, their ack wait ran out and another worker did
 * them again. A worker calls this before it takes any job. Returns the milliseconds it took.
 */
export function warmUpTextAnalysis(): number {
  const started = Date.now();
  const sample = 'The lighthouse guides the ships away from the rocks at night.';
  detectLanguage(sample);
  analyseEnglish(sample);
  return Date.now() - started;
}

/** True once both are loaded. */
export function textAnalysisWarm(): boolean {
  return languageModelLoaded() && englishPipelineLoaded();
}
