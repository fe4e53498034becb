/**
 * The tenant's named profiles, as the tenant page's profiles section lists
 * them and a scheme's form offers them under `profiles`. A module of its
 * own so that the form (in the first load) does not bring the tenant page.
 */
import { useEffect, useState } from 'preact/hooks';
import { useApp } from './state.ts';
import type { Schemas } from '../../../client/index.ts';

export type ProfileInfo = Schemas['ProfileInfo'];

/** The tenant's named profiles (`GET /api/<db>/profiles`, those of origin `named`), in the service's order; `refresh` asks again. */
export function useNamedProfiles(db: string): { named: ProfileInfo[] | undefined; error?: string; refresh(): void } {
  const app = useApp();
  const [named, setNamed] = useState<ProfileInfo[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    app.api.call<ProfileInfo[]>('GET', `/api/${encodeURIComponent(db)}/profiles`).then(
      (a) => { if (live) { setNamed(a.data.filter((p) => p.origin === 'named')); setError(undefined); } },
      (e) => { if (live) setError(e instanceof Error ? e.message : String(e)); },
    );
    return () => { live = false; };
  }, [db, tick]);
  return { named, error, refresh: () => setTick((n) => n + 1) };
}
