import { TemplateSchema, applyStyle, builtinTemplates, type TemplateInput } from '@captionfarm/captions';
import type { TemplateCatalog } from './services/templates.ts';

/** The caption engine's built-in templates and schema, as the control plane needs them. */
export function defaultTemplateCatalog(): TemplateCatalog {
  const byId = new Map(builtinTemplates.map((t) => [t.id, t]));
  return {
    builtins: () => builtinTemplates.map((t) => ({ id: t.id, name: t.name, description: t.description })),
    builtin: (id) => byId.get(id),
    applyStyle(base, style) {
      const r = applyStyle(base as TemplateInput, style);
      return r.ok ? { ok: true, template: r.template as never } : { ok: false, issues: r.issues };
    },
    validate(body) {
      const r = TemplateSchema.safeParse(body);
      return r.success ? { ok: true, template: r.data as never } : { ok: false, issues: r.error.issues };
    },
  };
}
