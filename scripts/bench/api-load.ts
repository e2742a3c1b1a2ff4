// The load side of bench:api, in its own process: autocannon at a fixed overall rate against one
// route, rotating through the accounts' keys (and their jobs). Prints autocannon's result as JSON.
import autocannon from 'autocannon';

interface Spec {
  url: string;
  route: 'create' | 'get' | 'healthz';
  rate: number;
  seconds: number;
  keys: string[];
  jobIds: string[];
  body: string;
}
const spec = JSON.parse(process.argv[2] ?? '{}') as Spec;
let i = 0;
const result = await autocannon({
  url: spec.url,
  connections: Math.max(10, Math.ceil(spec.rate / 20)),
  overallRate: spec.rate,
  duration: spec.seconds,
  requests: [
    {
      setupRequest: (req) => {
        const n = i++ % spec.keys.length;
        const headers = { authorization: `Bearer ${spec.keys[n]}`, 'content-type': 'application/json' };
        if (spec.route === 'create') return { ...req, method: 'POST', path: '/v1/automation-jobs', headers, body: spec.body };
        if (spec.route === 'get') return { ...req, method: 'GET', path: `/v1/automation-jobs/${spec.jobIds[n]}`, headers };
        return { ...req, method: 'GET', path: '/healthz' };
      },
    },
  ],
});
process.stdout.write(
  JSON.stringify({
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
  }),
);
