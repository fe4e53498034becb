/**
 * Markdown of descriptions to safe HTML. Raw HTML in the Markdown is shown as
 * text (escaped, never parsed as markup, so a `<script>` or an `onerror`
 * reads as what it is), and DOMPurify then removes anything that could
 * still run from marked's output (`javascript:` links and the like).
 */
import { Marked } from 'marked';
import DOMPurify from 'dompurify';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c]);

const marked = new Marked({
  gfm: true,
  async: false,
  renderer: {
    html(token) {
      return escapeHtml(token.text);
    },
  },
});

export function markdownToSafeHtml(text: string): string {
  const html = marked.parse(text) as string;
  return DOMPurify.sanitize(html, { USE_PROFILES: { html: true }, FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select'], FORBID_ATTR: ['style'] });
}
