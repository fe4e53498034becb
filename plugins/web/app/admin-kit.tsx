/**
 * What the administrator pages (the tenant page and its profiles section)
 * share: calls that answer the Response itself (files down and up), a
 * confirmation dialog, and an error's words.
 */
import { useEffect, useId, useRef } from 'preact/hooks';
import { ApiError, type ErrorPayload } from './api.ts';
import { useApp, type AppState } from './state.ts';

export const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** The messages of an error's violations whose path starts with `prefix` (all of them for ''), or its message. */
export function violationsOf(e: unknown, prefix = ''): string[] {
  if (!(e instanceof ApiError)) return [message(e)];
  const all = e.payload?.violations ?? [];
  const mine = all.filter((v) => String(v.path ?? '').replace(/^\//, '').startsWith(prefix));
  return mine.length ? mine.map((v) => v.message) : [e.message];
}

/** The file name a Content-Disposition header gives (RFC 5987's `filename*` first), or `fallback`. */
export function fileNameOf(header: string | null, fallback: string): string {
  const extended = /filename\*\s*=\s*UTF-8''([^;]+)/i.exec(header ?? '')?.[1];
  if (extended) {
    try { return decodeURIComponent(extended); } catch { /* the plain one then */ }
  }
  return /filename\s*=\s*"([^"]*)"/i.exec(header ?? '')?.[1] ?? fallback;
}

/**
 * Saves a response's body as a file, named as its Content-Disposition says or `fallback` (a blob behind an object
 * URL, so that the call could carry the anti-forgery token).
 */
export async function saveAs(response: Response, fallback: string): Promise<void> {
  const url = URL.createObjectURL(await response.blob());
  const a = document.createElement('a');
  a.href = url;
  a.download = fileNameOf(response.headers.get('content-disposition'), fallback);
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/**
 * A call through the pages' fetch (anti-forgery token, language) answering the Response itself, for bodies read as
 * they stream or saved as files; `body` goes as it is when it is a form, a file or text, else as JSON. A failure
 * throws ApiError.
 */
export async function send(app: AppState, method: string, path: string, body?: unknown): Promise<Response> {
  const raw = body === undefined || body instanceof FormData || body instanceof Blob || typeof body === 'string';
  const headers = new Headers(raw ? {} : { 'Content-Type': 'application/json' });
  const request = new Request(new URL(app.api.url(path), location.origin), {
    method, headers, credentials: 'same-origin', body: raw ? (body as BodyInit | undefined) : JSON.stringify(body),
  });
  const response = await app.api.fetch(request);
  if (!response.ok) {
    let payload: ErrorPayload | undefined;
    try { payload = JSON.parse(await response.text()); } catch { /* not JSON: the status says it */ }
    throw new ApiError(response.status, payload, response);
  }
  return response;
}

/** A confirmation in a modal dialog: the question, and the action's own button. */
export function Confirm({ open, title, text, action, onConfirm, onClose }: { open: boolean; title: string; text: string; action: string; onConfirm(): void; onClose(): void }) {
  const app = useApp();
  const dialog = useRef<HTMLDialogElement>(null);
  // Several dialogs may be on one page: each its own title's id.
  const titleId = `confirm-title-${useId()}`;
  useEffect(() => {
    const d = dialog.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    if (!open && d.open) d.close();
  }, [open]);
  return (
    <dialog ref={dialog} class="confirm" aria-labelledby={titleId} onClose={onClose}>
      <form method="dialog" onSubmit={(e) => { e.preventDefault(); onConfirm(); }}>
        <h2 id={titleId}>{title}</h2>
        <p>{text}</p>
        <div class="actions">
          <button type="submit" class="danger">{action}</button>
          <button type="button" onClick={onClose}>{app.t('cancel')}</button>
        </div>
      </form>
    </dialog>
  );
}
