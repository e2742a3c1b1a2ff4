import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SAFE_AREA_ZONES } from '@captionfarm/contracts';
import { startHarness, type Harness } from './harness.ts';

/**
 * GET /v1/openapi.json as a client generator reads it: every $ref resolves, every operation has a
 * unique operationId, declares the parameters of its path and describes each response; and the
 * routes and bodies of issue 42 (edit, hook title, profanity) and issue 43 (framing, renditions),
 * and every route of the public router is in it. The older routes' details are
 * checked in jobs.test.ts ("service documents").
 */
let h: Harness;
let doc: any;
beforeAll(async () => {
  h = await startHarness();
  const res = await fetch(`${h.url}/v1/openapi.json`);
  expect(res.status).toBe(200);
  doc = await res.json();
});
afterAll(async () => {
  await h?.close();
});

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

/** Every value of `node` with its JSON pointer. */
function* walk(node: unknown, at = '#'): Generator<[string, unknown]> {
  yield [at, node];
  if (node && typeof node === 'object') for (const [k, v] of Object.entries(node)) yield* walk(v, `${at}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`);
}

function resolve(pointer: string): unknown {
  let node: any = doc;
  for (const part of pointer.slice(2).split('/')) node = node?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  return node;
}

describe('the OpenAPI document', () => {
  it('is well formed: $refs resolve, operationIds are unique, path parameters are declared, responses described', () => {
    expect(doc.openapi).toBe('3.1.0');
    const refs = [...walk(doc)].filter(([at, v]) => at.endsWith('/$ref') && typeof v === 'string').map(([, v]) => v as string);
    expect(refs.length).toBeGreaterThan(20);
    for (const ref of refs) expect(resolve(ref), ref).toBeDefined();

    const ids: string[] = [];
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      expect(path).toMatch(/^\/v1\//);
      const params = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      for (const method of Object.keys(item)) {
        expect(METHODS, `${path} ${method}`).toContain(method);
        const op = item[method];
        ids.push(op.operationId);
        const declared = (op.parameters ?? []).filter((p: any) => p.in === 'path').map((p: any) => p.name);
        expect(declared.sort(), `${method} ${path}`).toEqual([...params].sort());
        for (const [status, response] of Object.entries<any>(op.responses)) {
          expect(status, `${method} ${path}`).toMatch(/^[1-5]\d\d$/);
          expect(typeof response.description, `${method} ${path} ${status}`).toBe('string');
        }
        if (op.requestBody) expect(op.requestBody.content['application/json'].schema, `${method} ${path}`).toBeDefined();
      }
    }
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z]+$/.test(id))).toBe(true);
  });

  it('documents the shorts edit of issue 42: the create options, GET .../edit, the profane words, the new codes', () => {
    const create = doc.components.schemas.CreateJobRequest.properties;
    expect(create.edit.properties.silences.enum).toEqual(['off', 'natural', 'fast', 'extra-fast']);
    expect(create.edit.properties.fillers.enum).toEqual(['off', 'safe', 'aggressive']);
    expect(create.edit.properties.zoom.enum).toEqual(['off', 'emphasis']);
    expect(create.edit.properties.keep.maxItems).toBe(2000);
    expect(create.edit.description).toMatch(/fast \(over 0\.4 s to 0\.15 s\)/);
    expect(create.hookTitle.required).toEqual(['text']);
    expect(create.hookTitle.properties.seconds).toMatchObject({ minimum: 0.5, maximum: 10, default: 3 });
    expect(create.profanity).toMatchObject({ enum: ['off', 'mask', 'bleep'], default: 'off' });
    expect(doc.paths['/v1/automation-jobs'].post.description).toMatch(/edit-out-of-range.*edit-left-nothing/);

    const edit = doc.paths['/v1/automation-jobs/{id}/edit'].get;
    expect(edit.operationId).toBe('getJobEdit');
    expect(edit.responses['200'].content['application/json'].schema.$ref).toBe('#/components/schemas/JobEdit');
    expect(edit.responses['409'].description).toMatch(/^edit_not_available/);
    const jobEdit = doc.components.schemas.JobEdit;
    expect(jobEdit.required).toEqual(['jobId', 'edit', 'hookTitle', 'profanity', 'plan']);
    expect(jobEdit.properties.plan.required).toEqual(['sourceSeconds', 'outputSeconds', 'keep', 'cuts', 'zooms', 'bleeps']);
    expect(jobEdit.properties.plan.properties.cuts.items.properties.reason.enum).toEqual(['silence', 'filler', 'repeat', 'voiced-gap', 'client']);

    const words = doc.paths['/v1/profanity-words'];
    expect(Object.keys(words).sort()).toEqual(['get', 'put']);
    expect(words.put.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/ProfanityWords');
    expect(words.put.responses['400'].description).toMatch(/^invalid_request/);
    expect(doc.components.schemas.ProfanityWords.properties.words.maxItems).toBe(500);

    expect(doc.components.schemas.ErrorBody.properties.error.properties.code.enum).toContain('edit_not_available');
    expect(doc.components.schemas.JobRecord.properties.failureCode.anyOf[0].enum).toEqual(expect.arrayContaining(['edit-out-of-range', 'edit-left-nothing']));
    // The record keeps exactly the spec's keys: the edit is not one of them.
    expect(doc.components.schemas.JobRecord.required).toHaveLength(15);
    const word = doc.components.schemas.TranscriptRecord.properties.words.items;
    expect(Object.keys(word.properties)).toEqual(['text', 'start', 'end', 'outputStart', 'outputEnd']);
    expect(word.required).toEqual(['text', 'start', 'end']);
    expect(doc.paths['/v1/automation-jobs/{id}/transcript'].get.description).toMatch(/outputStart\/outputEnd/);
  });

  it('documents every route of the public router (routes/public.ts): a route added without its document fails here', async () => {
    const source = await readFile(new URL('../src/routes/public.ts', import.meta.url), 'utf8');
    const routes = [...source.matchAll(/\br\.(get|post|put|delete|patch)\('([^']+)'/g)].map(([, method, route]) => [
      method,
      `/v1${route!.replace(/:(\w+)/g, '{$1}')}`,
    ]);
    expect(routes.length).toBeGreaterThan(20);
    expect(routes).toContainEqual(['get', '/v1/automation-jobs/{id}/outputs']);
    for (const [method, route] of routes) expect(doc.paths[route!]?.[method!], `${method} ${route}`).toBeDefined();
  });

  it('documents the framing of issue 43: the create fields with their descriptions, GET .../outputs, the refusals', () => {
    const create = doc.components.schemas.CreateJobRequest.properties;
    expect(create.reframe).toMatchObject({ enum: ['center', 'subject'], default: 'center', description: expect.stringMatching(/cutting at shot changes/) });
    expect(create.safeArea).toMatchObject({
      enum: ['none', 'tiktok', 'reels', 'shorts'],
      default: 'none',
      description: expect.stringMatching(/interface zones/),
    });
    expect(create.placement).toMatchObject({ enum: ['fixed', 'auto'], default: 'fixed', description: expect.stringMatching(/above or below/) });
    expect(create.subtitles).toMatchObject({
      enum: ['burn', 'track', 'both'],
      default: 'burn',
      description: expect.stringMatching(/mov_text in MP4, WebVTT in WebM/),
    });
    expect(create.poster).toMatchObject({ default: false, description: expect.stringMatching(/JPEG frame/) });
    expect(create.poster.anyOf[1]).toMatchObject({ required: ['at'], properties: { at: { minimum: 0 } } });
    expect(create.outputs).toMatchObject({ minItems: 1, maxItems: 4, description: expect.stringMatching(/GET \/v1\/automation-jobs\/\{id\}\/outputs/) });
    const item = create.outputs.items;
    expect(Object.keys(item.properties)).toEqual(['resolution', 'format', 'reframe']);
    expect(item.additionalProperties).toBe(false);
    for (const field of ['resolution', 'format', 'reframe']) expect(item.properties[field].description, field).toMatch(/\w/);
    const post = doc.paths['/v1/automation-jobs'].post;
    expect(post.description).toMatch(/Issue 43: reframe, safeArea, placement, outputs/);
    expect(post.responses['400'].description).toMatch(/more than 4 outputs/);
    expect(post.responses['400'].description).toMatch(/an overlay with reframe, outputs, poster/);
    expect(post.responses['422'].description).toMatch(/outputs\[i\]\.resolution/);

    const outputs = doc.paths['/v1/automation-jobs/{id}/outputs'].get;
    expect(outputs.operationId).toBe('getJobOutputs');
    expect(outputs.parameters.map((p: any) => p.name)).toEqual(['id']);
    expect(outputs.responses['200'].content['application/json'].schema.$ref).toBe('#/components/schemas/JobOutputs');
    expect(outputs.responses['404'].description).toMatch(/^not_found/);
    // Each app's zones, from the contracts' table, in the description.
    expect(outputs.description).toContain(`tiktok: ${SAFE_AREA_ZONES.tiktok.map((z) => `${z.width}x${z.height}+${z.x}+${z.y}`).join(', ')}`);
    const schema = doc.components.schemas.JobOutputs;
    expect(schema.required).toEqual(['jobId', 'safeArea', 'placement', 'subtitles', 'outputs', 'poster']);
    expect(schema.properties.outputs.maxItems).toBe(4);
    expect(schema.properties.outputs.items.required).toEqual([
      'index',
      'format',
      'reframe',
      'requestedResolution',
      'resolution',
      'sizeBytes',
      'downloadUrl',
      'outputExpiresAt',
    ]);
    expect(schema.properties.poster.anyOf[0].required).toEqual(['at', 'width', 'height', 'sizeBytes', 'downloadUrl', 'outputExpiresAt']);
    expect(schema.properties.outputs.description).toMatch(/index 0 is the job record's own/);
    expect(schema.properties.outputs.items.properties.downloadUrl).toMatchObject({
      type: ['string', 'null'],
      description: expect.stringMatching(/^A presigned GET link/),
    });
    expect(schema.properties.poster.anyOf[0].properties.at.description).toMatch(/Output seconds/);
    // The record keeps exactly the spec's keys: no framing field is one of them.
    expect(doc.components.schemas.JobRecord.required).toHaveLength(15);
    expect(Object.keys(doc.components.schemas.JobRecord.properties)).not.toContain('outputs');
  });
});
