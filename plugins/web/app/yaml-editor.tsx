/**
 * The YAML editor of the tenant page's profiles: CodeMirror 6 with YAML mode
 * (@codemirror/lang-yaml), in a shadow root for the same reason as the query
 * console's SQL editor (console.tsx: CodeMirror's styles must not need a
 * `<style>` element under the pages' Content-Security-Policy). Loaded with a
 * dynamic import when the editor is opened, so neither the first load nor
 * the tenant page carries it. Tab leaves the editor (no tab trap).
 */
import { useEffect, useRef } from 'preact/hooks';
import { EditorState } from '@codemirror/state';
import { EditorView, keymap, lineNumbers } from '@codemirror/view';
import { defaultKeymap, history, historyKeymap } from '@codemirror/commands';
import { defaultHighlightStyle, syntaxHighlighting } from '@codemirror/language';
import { yaml } from '@codemirror/lang-yaml';

const theme = EditorView.theme({
  '&': { border: '1px solid #8a8f98', borderRadius: '4px', backgroundColor: '#fff', color: '#1a1a1a', fontSize: '0.95rem' },
  '&.cm-focused': { outline: '3px solid #ffbf47', outlineOffset: '2px', boxShadow: '0 0 0 5px #1b1f24' },
  '.cm-content': { fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace', minHeight: '10rem' },
  '.cm-scroller': { maxHeight: '28rem', overflow: 'auto' },
  '.cm-gutters': { backgroundColor: '#f3f4f6', color: '#4b5563', borderRight: '1px solid #d1d5db' },
});

export function YamlEditor({ initial, label, onChange }: { initial: string; label: string; onChange(text: string): void }) {
  const host = useRef<HTMLDivElement>(null);
  const changed = useRef(onChange);
  changed.current = onChange;

  useEffect(() => {
    const root = host.current!.shadowRoot ?? host.current!.attachShadow({ mode: 'open' });
    const view = new EditorView({
      root,
      parent: root,
      state: EditorState.create({
        doc: initial,
        extensions: [
          lineNumbers(),
          history(),
          keymap.of([...defaultKeymap, ...historyKeymap]),
          syntaxHighlighting(defaultHighlightStyle),
          yaml(),
          theme,
          EditorView.lineWrapping,
          EditorView.contentAttributes.of({ 'aria-label': label }),
          EditorView.updateListener.of((u) => { if (u.docChanged) changed.current(u.state.doc.toString()); }),
        ],
      }),
    });
    return () => view.destroy();
  }, []);

  return <div class="yaml-editor" ref={host} />;
}
