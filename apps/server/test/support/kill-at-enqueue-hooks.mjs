// Loader-thread half of kill-at-enqueue.mjs: appends to the embedded job store's module a
// wrapper of LmdbJobStore.put that kills the process before it stores the job named.
let prefix = '';
export function initialize(data) {
  prefix = data.prefix;
}

export async function load(url, context, next) {
  const loaded = await next(url, context);
  if (!url.endsWith('/libs/store/src/embedded/jobs.ts')) return loaded;
  const patch = `
{
  const put = LmdbJobStore.prototype.put;
  LmdbJobStore.prototype.put = function (job) {
    if (job.id.startsWith(${JSON.stringify(prefix)})) process.kill(process.pid, 'SIGKILL');
    return put.call(this, job);
  };
}
`;
  return { ...loaded, source: `${String(loaded.source)}\n${patch}` };
}
