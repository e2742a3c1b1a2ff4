import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentClient, startHarness, TEST_AGENT_CAPABILITIES, type Harness } from '../../control-plane/test/harness.ts';
import { cliPiped, runCliAsLocalAdmin } from './cli-process.ts';

// What operators type: agent tokens, draining nodes, and whisper models, through the real CLI
// against a real control plane (the agent side is played over the real websocket protocol).

let h: Harness;
const clients: { close(): void }[] = [];
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  for (const c of clients) c.close();
  await h.close();
});

const cli = (...args: string[]) => runCliAsLocalAdmin({ url: h.url, dataDir: h.dataDir }, ...args);

// Each call starts a real CLI process (tsx): a few seconds each on a loaded 2-core machine.
describe('captionfarm admin agents / nodes', { timeout: 240_000 }, () => {
  it('a token made with the CLI registers an agent; drain and undrain from the CLI reach it', async () => {
    const made = await cli('admin', 'agents', 'token', 'create', '--name', 'rack-7', '--json');
    expect(made.code, made.stderr).toBe(0);
    const { token } = JSON.parse(made.stdout) as { token: string };
    expect(token).toMatch(/^cf_agent_/);

    const c = agentClient(h.url, token);
    clients.push(c);
    const { nodeId } = await c.agent.register.mutate({ nodeName: 'gpu-rack-7', capabilities: { ...TEST_AGENT_CAPABILITIES, gpu: true } });

    const listed = JSON.parse((await cli('admin', 'nodes', 'list', '--json')).stdout) as { id: string; name: string; state: string }[];
    expect(listed.find((n) => n.id === nodeId)).toMatchObject({ name: 'gpu-rack-7' });
    const table = await cli('admin', 'nodes', 'list');
    expect(table.stdout).toContain('gpu-rack-7');

    // By name, as the README shows.
    const drained = await cli('admin', 'nodes', 'drain', '--node', 'gpu-rack-7', '--json');
    expect(drained.code, drained.stderr).toBe(0);
    const afterDrain = JSON.parse((await cli('admin', 'nodes', 'list', '--json')).stdout) as { id: string; state: string }[];
    // Draining (or, if its heartbeats lapsed meanwhile, offline and drained).
    expect(afterDrain.find((n) => n.id === nodeId)?.state).toMatch(/drain/);
    // The agent is told, and gets no work while drained.
    expect((await c.agent.heartbeat.mutate({ nodeId, leases: [] })).drain).toBe(true);

    expect((await cli('admin', 'nodes', 'undrain', '--node', nodeId, '--json')).code).toBe(0);
    expect((await c.agent.heartbeat.mutate({ nodeId, leases: [] })).drain).toBe(false);
    const shown = JSON.parse((await cli('admin', 'nodes', 'show', '--node', 'gpu-rack-7')).stdout) as { id: string; state: string };
    expect(shown).toMatchObject({ id: nodeId });
    expect(shown.state).not.toMatch(/drain/);
  });

  it('token list shows each token without its secret; token revoke disconnects its agent, by prefix, again, and refuses an unknown one', async () => {
    const made = JSON.parse((await cli('admin', 'agents', 'token', 'create', '--name', 'rack-9', '--json')).stdout) as { id: string; token: string };
    const c = agentClient(h.url, made.token);
    clients.push(c);
    const { nodeId } = await c.agent.register.mutate({ nodeName: 'gpu-rack-9', capabilities: TEST_AGENT_CAPABILITIES });

    const listed = await cli('admin', 'agents', 'token', 'list', '--json');
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).not.toContain(made.token);
    const prefix = made.token.slice(0, 13);
    expect((JSON.parse(listed.stdout) as { id: string }[]).find((t) => t.id === made.id)).toMatchObject({
      name: 'rack-9',
      prefix,
      revokedAt: null,
      nodes: [{ id: nodeId, name: 'gpu-rack-9' }],
    });
    const table = await cli('admin', 'agents', 'token', 'list');
    expect(table.stdout).toMatch(/^ID\s+NAME\s+PREFIX\s+CREATEDAT\s+REVOKEDAT\s+NODES/m);
    expect(table.stdout).toMatch(new RegExp(`${made.id}\\s+rack-9\\s+${prefix}.*gpu-rack-9`));

    const revoked = await cli('admin', 'agents', 'token', 'revoke', '--token', prefix);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).toContain(`revoked agent token ${made.id}`);
    expect(revoked.stdout).toContain('gpu-rack-9');
    // The agent's calls are refused from now on; a second revoke answers the same.
    await expect(c.agent.heartbeat.mutate({ nodeId, leases: [] })).rejects.toThrow(/revoked agent token/);
    const again = await cli('admin', 'agents', 'token', 'revoke', '--token', made.id, '--json');
    expect(again.code, again.stderr).toBe(0);
    const after = JSON.parse((await cli('admin', 'agents', 'token', 'list', '--json')).stdout) as { id: string; revokedAt: string | null }[];
    expect(after.find((t) => t.id === made.id)?.revokedAt).toBe((JSON.parse(again.stdout) as { revokedAt: string }).revokedAt);

    const unknown = await cli('admin', 'agents', 'token', 'revoke', '--token', 'cf_agent_zzzz');
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toMatch(/No agent token cf_agent_zzzz/);
  });

  it('an unknown node is a clear error with a non-zero exit', async () => {
    const res = await cli('admin', 'nodes', 'drain', '--node', 'no-such-node');
    expect(res.code).not.toBe(0);
    expect(res.stderr).toMatch(/no-such-node|not found|No node/i);
  });
});

describe('captionfarm models', { timeout: 120_000 }, () => {
  let dir: string;
  let server: Server;
  let served: Buffer;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'cf-models-'));
    // A real ggml file, but not the one whisper.cpp publishes for "tiny": its SHA1 does not match.
    served = await readFile(path.resolve(import.meta.dirname, '../../../../shared/models/for-tests-ggml-tiny.bin'));
    server = createServer((req, res) => {
      if (req.url === '/ggml-tiny.bin') res.writeHead(200, { 'content-length': served.length }).end(served);
      else res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    await rm(dir, { recursive: true, force: true });
  });

  it('list shows the catalogue with nothing installed in an empty dir', async () => {
    const res = await cli('models', 'list', '--dir', dir, '--json');
    expect(res.code, res.stderr).toBe(0);
    const models = JSON.parse(res.stdout) as { name: string; installed: boolean }[];
    expect(models.map((m) => m.name)).toEqual(expect.arrayContaining(['tiny', 'base', 'small']));
    expect(models.every((m) => !m.installed)).toBe(true);
  });

  it('pull refuses a download whose SHA1 is not the published one, and keeps nothing', async () => {
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const res = await cli('models', 'pull', 'tiny', '--dir', dir, '--base-url', base);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/sha1/i);
    expect(await readdir(dir)).toEqual([]);
    const listed = JSON.parse((await cli('models', 'list', '--dir', dir, '--json')).stdout) as { name: string; installed: boolean }[];
    expect(listed.find((m) => m.name === 'tiny')?.installed).toBe(false);
  });

  // Regression: the embedded agent ran test-models/ggml-base.bin while `models list` said base was not installed.
  it('list without --dir shows models wherever the agent finds them, with their paths', async () => {
    const cache = path.join(dir, 'xdg');
    await mkdir(path.join(cache, 'captionfarm', 'test-models'), { recursive: true });
    await mkdir(path.join(cache, 'captionfarm', 'models'), { recursive: true });
    await writeFile(path.join(cache, 'captionfarm', 'test-models', 'ggml-base.bin'), 'base');
    await writeFile(path.join(cache, 'captionfarm', 'models', 'ggml-tiny.bin'), 'tiny');
    const res = await cliPiped(['models', 'list', '--json'], { XDG_CACHE_HOME: cache });
    expect(res.code, res.stderr).toBe(0);
    const models = JSON.parse(res.stdout) as { name: string; installed: boolean; path: string }[];
    expect(models.filter((m) => m.installed).map((m) => [m.name, m.path])).toEqual([
      ['tiny', path.join(cache, 'captionfarm', 'models', 'ggml-tiny.bin')],
      ['base', path.join(cache, 'captionfarm', 'test-models', 'ggml-base.bin')],
    ]);
    await rm(cache, { recursive: true, force: true });
  });

  it('pull of an unknown model name is a usage error', async () => {
    const res = await cli('models', 'pull', 'gigantic', '--dir', dir);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toMatch(/gigantic/);
  });
});
