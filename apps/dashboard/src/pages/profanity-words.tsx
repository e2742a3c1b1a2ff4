// The account's own profane words (issue 42), added to the language's list when a job masks or
// bleeps profanity: one a line, saved with PUT /v1/profanity-words; a refused word is shown at its line.
import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { ProfanityWords } from '@captionfarm/contracts';
import { api, ApiFailure } from '../api.ts';
import { lineError, parseVocabulary } from '../recognition.ts';
import { Card, ErrorState, Field, FormError, Loading, PageHeader } from '../ui.tsx';

export function ProfanityWordsPage() {
  const qc = useQueryClient();
  const saved = useQuery({ queryKey: ['profanity-words'], queryFn: () => api<ProfanityWords>('GET', '/v1/profanity-words') });
  // null: the list as saved; text once the user types.
  const [draft, setDraft] = useState<string | null>(null);
  const save = useMutation({
    mutationFn: (words: string[]) => api<ProfanityWords>('PUT', '/v1/profanity-words', { words }),
    onSuccess: async () => {
      setDraft(null);
      await qc.invalidateQueries({ queryKey: ['profanity-words'] });
    },
  });
  const text = draft ?? saved.data?.words.join('\n') ?? '';
  const parsed = parseVocabulary(text);
  const details = save.error instanceof ApiFailure ? save.error.details : [];
  const atLine = lineError(details, 'words', parsed.lines);
  return (
    <>
      <PageHeader title="Profanity words" subtitle="Words masked (f***) or bleeped in jobs that ask for it, on top of the word list of the job's language." />
      <Card title="Your words">
        {saved.isPending ? (
          <Loading />
        ) : saved.isError ? (
          <ErrorState error={saved.error} retry={() => void saved.refetch()} />
        ) : (
          <form
            onSubmit={(e) => {
              e.preventDefault();
              save.mutate(parsed.values);
            }}
            noValidate
          >
            <Field label="Words" hint="One word or phrase a line (up to 500, each up to 50 characters; any case). Empty lines are skipped." error={atLine}>
              {(id, d) => (
                <textarea
                  id={id}
                  aria-describedby={d}
                  rows={10}
                  value={text}
                  onChange={(e) => {
                    setDraft(e.target.value);
                    save.reset();
                  }}
                />
              )}
            </Field>
            {!atLine && <FormError error={save.error} />}
            <div className="actions">
              <button type="submit" className="btn primary" disabled={save.isPending}>
                {save.isPending ? 'Saving…' : 'Save words'}
              </button>
              {save.isSuccess && draft === null && (
                <span className="muted" role="status">
                  Saved: {saved.data.words.length} {saved.data.words.length === 1 ? 'word' : 'words'}.
                </span>
              )}
            </div>
          </form>
        )}
      </Card>
    </>
  );
}
