/**
 * The server's limits (GET /api/settings/: document size and formats, retroactivity, planning
 * window, text lengths), read once per session instead of copied here, and how they read in French.
 */
import { useQuery } from '@tanstack/react-query';
import { api, ok, type Schemas } from '../api/client';
import { queryKeys } from './query-keys';

export type Settings = Schemas['Settings'];

export const settingsQuery = {
  queryKey: queryKeys.settings(),
  queryFn: () => ok(api.GET('/api/settings/')),
  // The same for every account and for the whole session.
  staleTime: Infinity,
} as const;

/** The limits, once the server has answered (undefined before). */
export function useSettings(): Settings | undefined {
  return useQuery(settingsQuery).data;
}

/** How a content type is named to people, and the file name endings a file picker offers for it. */
const FORMATS: Record<string, { name: string; extensions: string[] }> = {
  'application/pdf': { name: 'PDF', extensions: ['.pdf'] },
  'image/jpeg': { name: 'JPG', extensions: ['.jpg', '.jpeg'] },
  'image/png': { name: 'PNG', extensions: ['.png'] },
};

const formatOf = (type: string) => FORMATS[type] ?? { name: type.split('/').pop()!.toUpperCase(), extensions: [] };

/** « PDF, JPG ou PNG » (« PDF, JPG et PNG » with `and`). */
export function documentFormatsText(settings: Settings, last: 'ou' | 'et' = 'ou'): string {
  const names = settings.document_content_types.map((type) => formatOf(type).name);
  return names.length > 1 ? `${names.slice(0, -1).join(', ')} ${last} ${names.at(-1)}` : (names[0] ?? '');
}

/** The `accept` of a document input: the endings, then the content types. */
export function documentAccept(settings: Settings): string {
  return [...settings.document_content_types.flatMap((type) => formatOf(type).extensions), ...settings.document_content_types].join(',');
}

/** « 10 Mo ». */
export function megabytes(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toLocaleString('fr-FR', { maximumFractionDigits: 1 })} Mo`;
}

/** What is wrong with a chosen document, one French sentence per problem (none: it may be sent). */
export function documentProblems(file: File, settings: Settings): string[] {
  return [
    ...(settings.document_content_types.includes(file.type) ? [] : [`« ${file.name} » : seuls les fichiers ${documentFormatsText(settings, 'et')} sont acceptés.`]),
    ...(file.size > settings.document_max_bytes ? [`« ${file.name} » dépasse ${megabytes(settings.document_max_bytes)}.`] : []),
  ];
}
