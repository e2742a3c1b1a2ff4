// The new-job form's two recognition fields as text: a vocabulary textarea (one term a line) and a
// replacements textarea (`from => to`, one a line). Blank lines are skipped, so each value keeps
// the line it came from: the API's errors (at `vocabulary.3`, `replacements.1.from`) are shown
// with the line number the user sees.

export interface Lines<T> {
  values: T[];
  /** The 1-based line of each value. */
  lines: number[];
  /** Lines that could not be read (replacements without `=>`), as messages. */
  problems: string[];
}

/** One term a line; surrounding spaces are the service's to trim. */
export function parseVocabulary(text: string): Lines<string> {
  const out: Lines<string> = { values: [], lines: [], problems: [] };
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    out.values.push(line.replace(/\r$/, ''));
    out.lines.push(i + 1);
  });
  return out;
}

/** `from => to` a line; `um =>` (nothing after the arrow) removes the words. */
export function parseReplacements(text: string): Lines<{ from: string; to: string }> {
  const out: Lines<{ from: string; to: string }> = { values: [], lines: [], problems: [] };
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    const at = line.indexOf('=>');
    if (at < 0) {
      out.problems.push(`Line ${i + 1}: write "from => to" (nothing after => removes the words).`);
      return;
    }
    out.values.push({
      from: line.slice(0, at).trim(),
      to: line
        .slice(at + 2)
        .replace(/\r$/, '')
        .trim(),
    });
    out.lines.push(i + 1);
  });
  return out;
}

/** The first API error under `field`, its item index turned into the textarea's line. */
export function lineError(details: readonly { path: string; message: string }[], field: string, lines: readonly number[]): string | undefined {
  const d = details.find((x) => x.path === field || x.path.startsWith(`${field}.`));
  if (!d) return undefined;
  const index = /^[^.]+\.(\d+)/.exec(d.path)?.[1];
  const line = index === undefined ? undefined : lines[Number(index)];
  return line === undefined ? d.message : `Line ${line}: ${d.message}`;
}
