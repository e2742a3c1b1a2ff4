import { describe, expect, it } from 'vitest';
import { TemplateSchema, builtinTemplates, deriveTemplate, getBuiltinTemplate, parseTemplate, FONT_FAMILIES } from '../src/index.ts';

describe('TemplateSchema', () => {
  it('fills every default from just an id and a name', () => {
    const t = TemplateSchema.parse({ id: 'mine', name: 'Mine' });
    expect(t.font).toEqual({ family: 'Montserrat', weight: 800, size: 6, letterSpacing: 0, lineHeight: 1.2, wordSpacing: 0.28, fontId: null });
    expect(t.outline).toEqual({ color: '#000000', width: 0.08 });
    expect(t.shadow).toBeNull();
    expect(t.layout.maxLines).toBe(2);
    expect(t.animation).toEqual({ page: 'none', word: 'none', active: 'none', duration: 0.14 });
    expect(t.active.box).toBeNull();
  });

  it('fills defaults inside a partially given nested object', () => {
    const t = parseTemplate({ id: 'a', name: 'A', active: { box: { color: '#7C3AED' } }, shadow: {} });
    expect(t.active.box).toEqual({ color: '#7C3AED', radius: 0.18, paddingX: 0.3, paddingY: 0.12 });
    expect(t.shadow).toEqual({ color: '#000000A0', blur: 0.12, offsetX: 0, offsetY: 0.05 });
    expect(t.active.scale).toBe(1);
  });

  it('null turns an effect off', () => {
    expect(parseTemplate({ id: 'a', name: 'A', outline: null }).outline).toBeNull();
  });

  it.each([
    ['unknown top-level key', { colour: '#fff' }, ['colour']],
    ['unknown nested key', { font: { famly: 'Inter' } }, ['font']],
    ['unknown key in an effect', { active: { box: { colour: '#fff' } } }, ['active', 'box']],
    ['bad colour', { fill: 'red' }, ['fill']],
    ['short hex colour', { fill: '#fff' }, ['fill']],
    ['unknown font family', { font: { family: 'Comic Sans' } }, ['font', 'family']],
    ['weight not a multiple of 100', { font: { weight: 750 } }, ['font', 'weight']],
    ['font too big', { font: { size: 40 } }, ['font', 'size']],
    ['zero lines', { layout: { maxLines: 0 } }, ['layout', 'maxLines']],
    ['unknown animation', { animation: { word: 'explode' } }, ['animation', 'word']],
    ['position outside 0..1', { position: { y: 1.5 } }, ['position', 'y']],
  ])('rejects %s', (_name, patch, path) => {
    const r = TemplateSchema.safeParse({ id: 'a', name: 'A', ...patch });
    expect(r.success).toBe(false);
    const paths = r.error!.issues.map((i) => [...i.path, ...('keys' in i ? i.keys : [])].join('.'));
    expect(
      paths.some((p) => p.startsWith(path.join('.'))),
      paths.join(),
    ).toBe(true);
  });

  it.each([
    ['missing id', { name: 'A' }],
    ['missing name', { id: 'a' }],
    ['id with capitals', { id: 'MyTemplate', name: 'A' }],
    ['id with spaces', { id: 'my template', name: 'A' }],
    ['id with a double dash', { id: 'my--template', name: 'A' }],
    ['empty name', { id: 'a', name: '  ' }],
  ])('rejects %s', (_name, input) => {
    expect(TemplateSchema.safeParse(input).success).toBe(false);
  });

  it('deriveTemplate deep-merges a patch over a built-in and revalidates', () => {
    const base = getBuiltinTemplate('karaoke')!;
    const t = deriveTemplate(base, { id: 'my-karaoke', name: 'Mine', active: { color: '#FF0000' }, shadow: null });
    expect(t.active.color).toBe('#FF0000');
    expect(t.spoken.color).toBe(base.spoken.color);
    expect(t.font).toEqual(base.font);
    expect(t.shadow).toBeNull();
    expect(() => deriveTemplate(base, { font: { size: 99 } })).toThrow();
  });
});

describe('builtinTemplates', () => {
  it('has at least 8 templates with unique kebab-case ids, names and descriptions', () => {
    expect(builtinTemplates.length).toBeGreaterThanOrEqual(8);
    const ids = builtinTemplates.map((t) => t.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const t of builtinTemplates) {
      expect(t.id).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
      expect(t.name.length).toBeGreaterThan(2);
      expect(t.description.length).toBeGreaterThan(20);
    }
  });

  it('every built-in round-trips through the schema unchanged (what a client may POST)', () => {
    for (const t of builtinTemplates) expect(TemplateSchema.parse(JSON.parse(JSON.stringify(t)))).toEqual(t);
  });

  it('includes the classic looks', () => {
    for (const id of ['karaoke', 'word-pop', 'boxed-word', 'bounce', 'typewriter', 'clean-subtitle', 'neon', 'keyword-emphasis']) {
      expect(getBuiltinTemplate(id), id).toBeDefined();
    }
    expect(getBuiltinTemplate('nope')).toBeUndefined();
  });

  it('looks clearly different: every pair differs in at least 3 visual traits', () => {
    const traits = (t: (typeof builtinTemplates)[number]) => [
      t.font.family,
      t.font.weight,
      t.text.case,
      t.fill,
      t.outline ? 'outline' : 'no-outline',
      t.background ? `bg-${t.background.scope}` : 'no-bg',
      t.glow ? 'glow' : 'no-glow',
      t.active.color ?? 'no-active-colour',
      t.active.box ? 'active-box' : 'no-active-box',
      t.emphasis ? 'emphasis' : 'no-emphasis',
      t.animation.page,
      t.animation.word,
      t.animation.active,
      t.layout.maxLines,
      t.layout.maxWordsPerLine,
    ];
    for (const a of builtinTemplates) {
      for (const b of builtinTemplates) {
        if (a.id >= b.id) continue;
        const ta = traits(a);
        const tb = traits(b);
        const diff = ta.filter((v, i) => v !== tb[i]).length;
        expect(diff, `${a.id} vs ${b.id}`).toBeGreaterThanOrEqual(3);
      }
    }
  });

  it('uses only families the renderer ships', () => {
    for (const t of builtinTemplates) expect(FONT_FAMILIES).toContain(t.font.family);
  });

  it('is frozen', () => {
    expect(Object.isFrozen(builtinTemplates[0]!.font)).toBe(true);
  });
});
