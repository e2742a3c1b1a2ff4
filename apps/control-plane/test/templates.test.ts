import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadImage } from '@napi-rs/canvas';
import { builtinTemplates } from '@captionfarm/captions';
import { apiFor, startHarness, type Api, type Harness } from './harness.ts';

let h: Harness;
let api: Api;
let key: string;
beforeAll(async () => {
  h = await startHarness();
  ({ api, key } = await h.account('pro'));
});
afterAll(() => h.close());

describe('/v1/templates', () => {
  it('lists every built-in template with id, name and description', async () => {
    const res = await api('GET', '/v1/templates');
    expect(res.status).toBe(200);
    expect(res.body.templates.length).toBeGreaterThanOrEqual(8);
    expect(res.body.templates.map((t: { id: string }) => t.id)).toEqual(builtinTemplates.map((t) => t.id));
    for (const t of res.body.templates) {
      expect(t.builtin).toBe(true);
      expect(t.name.length).toBeGreaterThan(2);
      expect(t.description.length).toBeGreaterThan(10);
    }
  });

  it('saves a custom template per account, usable as templateId, then deletes it', async () => {
    const created = await api('POST', '/v1/templates', { id: 'brand-yellow', name: 'Brand yellow', fill: '#FFD400' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.template.fill).toBe('#FFD400');
    expect((await api('POST', '/v1/templates', { id: 'brand-yellow', name: 'again' })).status).toBe(409);
    expect((await api('POST', '/v1/templates', { id: builtinTemplates[0]!.id, name: 'shadow' })).status).toBe(409);
    const list = await api('GET', '/v1/templates');
    expect(list.body.templates.at(-1)).toMatchObject({ id: 'brand-yellow', builtin: false });
    const job = await api('POST', '/v1/automation-jobs', { videoUrl: 'https://v.example.com/a.mp4', templateId: 'brand-yellow' });
    expect(job.status).toBe(202);
    const { api: other } = await h.account('pro', 'other');
    expect((await other('GET', '/v1/templates/brand-yellow')).status).toBe(404);
    expect((await other('POST', '/v1/automation-jobs', { videoUrl: 'https://v.example.com/a.mp4', templateId: 'brand-yellow' })).status).toBe(400);
    expect((await api('DELETE', '/v1/templates/brand-yellow')).status).toBe(204);
    expect((await api('GET', '/v1/templates/brand-yellow')).status).toBe(404);
    expect((await api('DELETE', `/v1/templates/${builtinTemplates[0]!.id}`)).status).toBe(403);
    // The queued job keeps the template it was created with.
    expect((await api('GET', `/v1/automation-jobs/${job.body.id}`)).body.templateId).toBe('brand-yellow');
  });

  it('400 with details for an invalid template', async () => {
    const res = await api('POST', '/v1/templates', { id: 'Bad Id', name: '', fill: 'yellowish', colour: 1 });
    expect(res.status).toBe(400);
    const paths = res.body.error.details.map((d: { path: string }) => d.path);
    expect(paths).toEqual(expect.arrayContaining(['id', 'name', 'fill', 'colour']));
  });

  it('POST /v1/templates/:id/preview returns one rendered PNG frame with the captions drawn', async () => {
    const res = await fetch(`${h.url}/v1/templates/${builtinTemplates[0]!.id}/preview`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'Hello there from the preview', width: 540, height: 960 }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    const img = await loadImage(Buffer.from(await res.arrayBuffer()));
    expect([img.width, img.height]).toEqual([540, 960]);
    const plain = await fetch(`${h.url}/v1/templates/${builtinTemplates[0]!.id}/preview`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'Different words entirely here', width: 540, height: 960 }),
    });
    expect(
      Buffer.from(await plain.arrayBuffer()).equals(
        Buffer.from(
          await (
            await fetch(`${h.url}/v1/templates/${builtinTemplates[0]!.id}/preview`, {
              method: 'POST',
              headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
              body: JSON.stringify({ text: 'Hello there from the preview', width: 540, height: 960 }),
            })
          ).arrayBuffer(),
        ),
      ),
    ).toBe(false);
    const bad = await apiFor(h.url, key)('POST', `/v1/templates/${builtinTemplates[0]!.id}/preview`, { width: 10 });
    expect(bad.status).toBe(400);
    expect((await apiFor(h.url, key)('POST', '/v1/templates/nope/preview', {})).status).toBe(404);
  });
});
