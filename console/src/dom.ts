// A few DOM helpers: enough to build the console's pages without a framework.

export type Child = Node | string | number | null | undefined | false;
type Props = Record<string, unknown> & { class?: string };

/** `h('button', { class: 'primary', onclick: fn }, 'Save')`: attributes, properties, listeners, children. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props: Props | null = null, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(props ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') element.addEventListener(name.slice(2), value as EventListener);
    else if (name === 'class') element.className = String(value);
    else if (value === true) element.setAttribute(name, '');
    else if (name === 'value' && 'value' in element) (element as HTMLInputElement).value = String(value);
    else element.setAttribute(name, String(value));
  }
  append(element, children);
  return element;
}

export function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child);
  }
}

export function replace(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}

export const usd = (value: number | null | undefined): string =>
  value === null || value === undefined ? '—' : `$${value.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 6 })}`;

export const when = (iso: string | null | undefined): string => (iso ? new Date(iso).toLocaleString('en-GB', { dateStyle: 'medium', timeStyle: 'medium' }) : '—');

/** A table that scrolls sideways on a narrow screen; each cell carries its column name for the phone layout. */
export function table(headers: string[], rows: Child[][], empty = 'Nothing here yet.'): HTMLElement {
  if (rows.length === 0) return h('p', { class: 'empty' }, empty);
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      null,
      h('thead', null, h('tr', null, ...headers.map((name) => h('th', { scope: 'col' }, name)))),
      h('tbody', null, ...rows.map((cells) => h('tr', null, ...cells.map((cell, i) => h('td', { 'data-label': headers[i] }, cell))))),
    ),
  );
}

/** A message box: `error` ones are announced to screen readers. */
export function notice(kind: 'error' | 'ok' | 'info', text: string): HTMLElement {
  return h('p', { class: `notice ${kind}`, role: kind === 'error' ? 'alert' : 'status' }, text);
}

/** A labelled form field. */
export function field(label: string, control: HTMLElement, hint?: string): HTMLElement {
  return h('label', { class: 'field' }, h('span', null, label), control, hint ? h('small', null, hint) : null);
}

/** Asks in a modal dialog; resolves true on confirm. */
export function confirmDialog(title: string, text: string, confirmLabel: string): Promise<boolean> {
  return new Promise((resolve) => {
    const dialog = h('dialog', { class: 'confirm', 'aria-labelledby': 'confirm-title' });
    const close = (answer: boolean) => {
      dialog.close();
      dialog.remove();
      resolve(answer);
    };
    append(dialog, [
      h('h2', { id: 'confirm-title' }, title),
      h('p', null, text),
      h(
        'div',
        { class: 'actions' },
        h('button', { type: 'button', onclick: () => close(false) }, 'Cancel'),
        h('button', { type: 'button', class: 'danger', onclick: () => close(true) }, confirmLabel),
      ),
    ]);
    dialog.addEventListener('cancel', () => close(false));
    document.body.appendChild(dialog);
    dialog.showModal();
  });
}
