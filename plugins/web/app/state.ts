import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Api, Metamodel, MetaType, ServiceConfig, WebSession } from './api.ts';
import type { Language } from './i18n.ts';

export interface AppState {
  api: Api;
  config: ServiceConfig;
  language: Language;
  t(key: string, params?: Record<string, string | number>): string;
  setLanguage(language: Language): void;
  /** The database of the page; undefined on the service-wide pages. */
  db?: string;
  session?: WebSession;
  meta?: Metamodel;
  /** Time travel: the ISO time of `?at=` and its epoch milliseconds (the REST interface's `version`). */
  at?: string;
  version?: number;
  /** Whether the person may change objects here and now (access level, not time travel). */
  canEdit: boolean;
  /** A page address below `{ctx}/web/` that keeps `?at=`. */
  link(path: string): string;
  go(path: string): void;
  signOut(): void;
  /** Takes a new session body (after a tenant switch). */
  setSession(session: WebSession): void;
  /** Grows with every change the pages make, so that the tree reads its open lists again. */
  changes: number;
  noteChange(): void;
  /** Asks the metamodel again (If-None-Match): after an upload it shows at once. */
  refreshMeta(): void;
}

export const AppContext = createContext<AppState | null>(null);

export function useApp(): AppState {
  const state = useContext(AppContext);
  if (!state) throw new Error('AppContext missing');
  return state;
}

export function typeLabel(app: AppState, typeName: string): string {
  const type = app.meta?.types[typeName];
  return type ? (type.labels[app.language] ?? type.label) : typeName;
}

export function labelOf(app: AppState, thing: { labels: { en: string; de: string }; label: string }): string {
  return thing.labels[app.language] ?? thing.label;
}

/** The type of a plural path segment, by the metamodel (the concrete or abstract type that owns the plural). */
export function typeOfPlural(meta: Metamodel, plural: string): MetaType | undefined {
  return Object.values(meta.types).find((t) => t.plural === plural);
}

export function formatTime(app: AppState, ms: number): string {
  return new Intl.DateTimeFormat(app.language === 'de' ? 'de-DE' : 'en-GB', { dateStyle: 'medium', timeStyle: 'medium' }).format(new Date(ms));
}

/** Whether the person may use the query console: administrators of the database and system administrators (the query interface's rule). */
export function mayQuery(app: AppState): boolean {
  return !!app.session && (app.session.accessLevel === 'ADMINISTRATOR' || app.session.systemAdmin);
}
