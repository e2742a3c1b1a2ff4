import type { Router } from 'express';
import { ApiError } from '@captionfarm/contracts';
import type { AgentsService } from './service.ts';

/** Admin routes for agent tokens and nodes (`captionfarm admin agents|nodes ...`). */
export function mountAgentAdmin(r: Router, agents: AgentsService): void {
  /** A node by id or by name. */
  const findNode = async (idOrName: string) => {
    const node = (await agents.listNodes()).find((n) => n.id === idOrName || n.name === idOrName);
    if (!node) throw new ApiError('not_found', `No agent node ${idOrName}.`);
    return node;
  };
  r.post('/agents/tokens', async (req, res) => {
    const raw = (req.body as { name?: unknown } | undefined)?.name;
    res.status(201).json(await agents.createToken(typeof raw === 'string' ? raw.slice(0, 100) : null));
  });
  r.get('/agents/tokens', async (_req, res) => {
    res.json({ tokens: await agents.listTokens() });
  });
  r.post('/agents/tokens/:id/revoke', async (req, res) => {
    res.json(await agents.revokeToken(String(req.params.id)));
  });
  r.get('/nodes', async (_req, res) => {
    res.json({ nodes: await agents.listNodes() });
  });
  r.get('/nodes/:id', async (req, res) => {
    res.json(await findNode(String(req.params.id)));
  });
  for (const action of ['drain', 'undrain'] as const) {
    r.post(`/nodes/:id/${action}`, async (req, res) => {
      const node = await findNode(String(req.params.id));
      await agents.setDrain(node.id, action === 'drain');
      res.json({ id: node.id, name: node.name, drain: action === 'drain' });
    });
  }
}
