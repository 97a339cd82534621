/** Resolves when every promise settled or after `ms`, whichever comes first. */
export async function waitAll(promises: Iterable<Promise<unknown>>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const all = Promise.allSettled([...promises]).then(() => true);
  const limit = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([all, limit]);
  } finally {
    clearTimeout(timer);
  }
}
