import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, scrub } from '../src/index.ts';

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _e, cb) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      cb();
    },
  });
  return { lines, logger: createLogger({ name: 'test', destination }) };
}

describe('createLogger', () => {
  it('writes one JSON object per line with level, ISO time, service and the fields given', () => {
    const { lines, logger } = capture();
    logger.info({ jobId: 'j1', accountId: 'a1' }, 'hello');
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 'info', service: 'test', jobId: 'j1', accountId: 'a1', msg: 'hello' });
    expect(Date.parse(JSON.parse(lines[0]!).time)).toBeGreaterThan(0);
  });

  it('censors secret-named fields and scrubs secrets out of messages and string fields', () => {
    const { lines, logger } = capture();
    const url = 'https://store.example/b/outputs/x.mp4?X-Amz-Credential=AKIA%2F&X-Amz-Signature=abcdef0123456789';
    logger.info(
      { token: 'cf_agent_abcdefghijklmnop', headers: { authorization: 'Bearer cf_live_QQQQQQQQQQ' }, detail: { uploadUrl: url }, note: `PUT ${url} failed` },
      `could not reach ${url} with whsec_c2VjcmV0c2VjcmV0 and cf_admin_ZZZZZZZZZZZZ`,
    );
    const text = lines.join('\n');
    for (const s of ['cf_agent_abcdefghijklmnop', 'cf_live_QQQQQQQQQQ', 'abcdef0123456789', 'AKIA', 'whsec_c2VjcmV0c2VjcmV0', 'cf_admin_ZZZZZZZZZZZZ'])
      expect(text).not.toContain(s);
    const line = JSON.parse(lines[0]!);
    expect(line.token).toBe('[redacted]');
    expect(line.headers.authorization).toBe('[redacted]');
    expect(line.note).toBe('PUT https://store.example/b/outputs/x.mp4?[redacted] failed');
    expect(line.msg).toContain('https://store.example/b/outputs/x.mp4?[redacted]');
  });

  it('scrub keeps what is not secret', () => {
    expect(scrub('job 3f2a ended: ingest-failed at https://example.com/v.mp4')).toBe('job 3f2a ended: ingest-failed at https://example.com/v.mp4');
  });
});
