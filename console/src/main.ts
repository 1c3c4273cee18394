// The admin console: a single page over the admin API (/admin/v1). Hash routes, no framework.
import { ApiError, call, token, whenUnauthorized, type ApiKey, type Delivery, type DeliveryAttempt, type LedgerEntry, type Overview, type Page, type Task, type TaskDetail, type Wallet, type Workspace } from './api';
import { append, confirmDialog, field, h, notice, replace, table, usd, when, type Child } from './dom';

const PAGE_SIZE = 20;
const app = document.getElementById('app')!;

// ---------- shell and routing ----------

interface Route {
  name: string;
  render: (main: HTMLElement, ...params: string[]) => void | Promise<void>;
}

const routes: Array<{ pattern: RegExp; route: Route }> = [
  { pattern: /^#\/overview$/, route: { name: 'overview', render: overviewPage } },
  { pattern: /^#\/workspaces$/, route: { name: 'workspaces', render: workspacesPage } },
  { pattern: /^#\/workspaces\/([^/]+)$/, route: { name: 'workspaces', render: workspacePage } },
  { pattern: /^#\/tasks$/, route: { name: 'tasks', render: tasksPage } },
  { pattern: /^#\/tasks\/([^/]+)$/, route: { name: 'tasks', render: taskPage } },
  { pattern: /^#\/deliveries$/, route: { name: 'deliveries', render: deliveriesPage } },
];

let signInMessage: string | null = null;
whenUnauthorized((message) => {
  token.clear();
  signInMessage = `${message}. Sign in again.`;
  render();
});

function render(): void {
  if (!token.get()) {
    signInPage();
    return;
  }
  const hash = location.hash || '#/overview';
  const path = hash.split('?')[0]!;
  const found = routes.map(({ pattern, route }) => ({ route, match: pattern.exec(path) })).find(({ match }) => match);
  const main = h('main', { id: 'main' });
  replace(app, shell(found?.route.name ?? ''), main);
  if (!found) {
    append(main, [h('h1', null, 'Page not found'), notice('error', `There is no page at ${hash}.`), h('a', { href: '#/overview' }, 'Go to the overview')]);
    return;
  }
  void Promise.resolve(found.route.render(main, ...found.match!.slice(1).map(decodeURIComponent))).catch((error: unknown) => {
    append(main, [errorNotice(error)]);
  });
}

function shell(active: string): HTMLElement {
  const link = (name: string, href: string, label: string) => h('a', { href, class: active === name ? 'active' : undefined, 'aria-current': active === name ? 'page' : undefined }, label);
  const status = h('span', { class: 'nav-status', role: 'status' });
  return h(
    'header',
    { class: 'topbar' },
    h('a', { class: 'brand', href: '#/overview' }, 'svc-gateway admin'),
    h(
      'nav',
      { 'aria-label': 'Sections' },
      link('overview', '#/overview', 'Overview'),
      link('workspaces', '#/workspaces', 'Workspaces'),
      link('tasks', '#/tasks', 'Tasks'),
      link('deliveries', '#/deliveries', 'Webhook deliveries'),
      h('button', { type: 'button', class: 'link', onclick: () => void openQueues(status) }, 'Queues ↗'),
      h('button', { type: 'button', class: 'link', onclick: signOut }, 'Sign out'),
    ),
    status,
  );
}

/** bull-board cannot receive the Bearer token on a navigation: trade it for its short-lived HttpOnly cookie first. */
async function openQueues(status: HTMLElement): Promise<void> {
  const tab = window.open('about:blank', '_blank');
  try {
    const session = await call<{ path: string }>('POST', '/queue-dashboard/session');
    if (tab) tab.location.href = session.path;
    else location.href = session.path;
    status.textContent = '';
  } catch (error) {
    tab?.close();
    status.textContent = `Could not open the queue dashboard: ${messageOf(error)}`;
  }
}

function signOut(): void {
  token.clear();
  signInMessage = 'Signed out.';
  render();
}

function signInPage(): void {
  const input = h('input', { type: 'password', name: 'token', id: 'admin-token', autocomplete: 'current-password', required: true, spellcheck: 'false' });
  const message = h('div', { class: 'messages' });
  if (signInMessage) append(message, [notice(signInMessage === 'Signed out.' ? 'info' : 'error', signInMessage)]);
  const button = h('button', { type: 'submit', class: 'primary' }, 'Sign in');
  const form = h(
    'form',
    {
      class: 'card signin',
      onsubmit: async (event: Event) => {
        event.preventDefault();
        const value = input.value.trim();
        if (!value) {
          replace(message, notice('error', 'Type the admin token (ADMIN_TOKEN) to sign in.'));
          return;
        }
        button.disabled = true;
        replace(message, notice('info', 'Checking the token…'));
        try {
          await call('GET', '/overview', { tokenOverride: value });
          token.set(value);
          signInMessage = null;
          // Setting the hash renders (hashchange); otherwise render the page asked for.
          if (!location.hash) location.hash = '#/overview';
          else render();
        } catch (error) {
          replace(message, errorNotice(error));
          button.disabled = false;
        }
      },
    },
    h('h1', null, 'Sign in'),
    h('p', null, 'Type the admin token (ADMIN_TOKEN of this service). It stays in this tab only (session storage) and is sent as a Bearer header.'),
    field('Admin token', input),
    button,
    message,
  );
  replace(app, h('main', { id: 'main', class: 'narrow' }, form));
  input.focus();
}

// ---------- shared pieces ----------

function messageOf(error: unknown): string {
  return error instanceof ApiError ? error.message : error instanceof Error ? `Unexpected error: ${error.message}` : String(error);
}

function errorNotice(error: unknown): HTMLElement {
  return notice('error', messageOf(error));
}

/**
 * A list paged by the API's cursor: Previous / Next, the page number, errors in words. `load`
 * gets the cursor (undefined for the first page); `reload()` starts over (after a filter change).
 */
function pagedList<T>(load: (after: string | undefined) => Promise<Page<T>>, show: (items: T[]) => HTMLElement, label: string): { element: HTMLElement; reload: () => void } {
  const cursors: Array<string | undefined> = [undefined];
  let index = 0;
  const body = h('div', { class: 'list-body', 'aria-live': 'polite' });
  const info = h('span', { class: 'page-info' });
  const previous = h('button', { type: 'button', onclick: () => go(index - 1) }, '← Previous');
  const next = h('button', { type: 'button', onclick: () => go(index + 1) }, 'Next →');
  const element = h('section', { class: 'paged', 'aria-label': label }, body, h('div', { class: 'pager' }, previous, info, next));

  async function go(target: number): Promise<void> {
    previous.disabled = true;
    next.disabled = true;
    replace(body, h('p', { class: 'loading' }, 'Loading…'));
    try {
      const page = await load(cursors[target]);
      index = target;
      if (page.nextCursor) cursors[index + 1] = page.nextCursor;
      cursors.length = index + (page.hasMore && page.nextCursor ? 2 : 1);
      replace(body, show(page.items));
      info.textContent = `Page ${index + 1}${page.hasMore ? '' : ' (last)'}`;
      previous.disabled = index === 0;
      next.disabled = !page.hasMore;
    } catch (error) {
      replace(body, errorNotice(error));
      info.textContent = '';
      previous.disabled = index === 0;
      next.disabled = true;
    }
  }
  void go(0);
  return {
    element,
    reload: () => {
      cursors.length = 1;
      void go(0);
    },
  };
}

function walletCard(title: string, wallet: Wallet, id: string): HTMLElement {
  return h(
    'div',
    { class: 'card wallet', id },
    h('h3', null, title),
    h(
      'dl',
      null,
      h('dt', null, 'Balance'),
      h('dd', { class: 'balance' }, usd(wallet.balanceUsd)),
      h('dt', null, 'Held'),
      h('dd', { class: 'held' }, usd(wallet.heldUsd)),
      h('dt', null, 'Available'),
      h('dd', { class: 'available' }, usd(wallet.availableUsd)),
    ),
  );
}

/** A select whose first option is chosen unless `value` names another. */
function select(name: string, options: Array<[string, string]>, value?: string): HTMLSelectElement {
  const element = h('select', { name }, ...options.map(([optionValue, label]) => h('option', { value: optionValue }, label)));
  if (value !== undefined && options.some(([optionValue]) => optionValue === value)) element.value = value;
  return element;
}

function badge(text: string): HTMLElement {
  return h('span', { class: `badge ${text.replace(/[^a-z_-]/gi, '')}` }, text);
}

function shortId(id: string): string {
  return id.length > 18 ? `${id.slice(0, 14)}…` : id;
}

function newReference(): string {
  const stamp = new Date().toISOString().slice(0, 10);
  const random = crypto.getRandomValues(new Uint8Array(6));
  return `console-${stamp}-${[...random].map((b) => b.toString(16).padStart(2, '0')).join('')}`;
}

/** Copies to the clipboard; on plain HTTP (no Clipboard API) selects the text and uses the older command. */
async function copyText(text: string, source: HTMLInputElement): Promise<boolean> {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    // fall through to the selection
  }
  source.select();
  return document.execCommand('copy');
}

// ---------- overview ----------

async function overviewPage(main: HTMLElement): Promise<void> {
  const body = h('div', null, h('p', { class: 'loading' }, 'Loading…'));
  append(main, [h('div', { class: 'title-row' }, h('h1', null, 'Overview'), h('button', { type: 'button', onclick: () => void load() }, 'Refresh')), body]);
  async function load(): Promise<void> {
    try {
      const data = await call<Overview>('GET', '/overview');
      taskKinds = data.taskKinds;
      replace(
        body,
        h(
          'div',
          { class: 'cards' },
          h('div', { class: 'card stat' }, h('h3', null, 'Open holds'), h('p', { class: 'figure', id: 'open-holds' }, data.openHolds)),
          h('div', { class: 'card stat' }, h('h3', null, 'Held'), h('p', { class: 'figure', id: 'held-usd' }, usd(data.heldUsd))),
        ),
        h('h2', null, 'Queues'),
        table(
          ['Queue', 'Waiting', 'Active', 'Delayed', 'Prioritized', 'Failed'],
          // A count is null when Redis did not answer in time: shown as unknown.
          data.queues.map((q) => [q.name, ...[q.waiting, q.active, q.delayed, q.prioritized, q.failed].map((count) => count ?? '—')]),
          'No queues are registered.',
        ),
        h('h2', null, 'Tasks in the last hour'),
        h('p', { class: 'hint' }, `Created since ${when(data.since)}.`),
        data.tasksCapped ? notice('info', 'A kind had more tasks than one overview counts: its figures are a lower bound.') : null,
        table(
          ['Kind', 'Status', 'Tasks'],
          data.tasksLastHour.map((row) => [row.kind, badge(row.status), h('a', { href: `#/tasks?kind=${encodeURIComponent(row.kind)}&status=${encodeURIComponent(row.status)}` }, String(row.count))]),
          'No task was created in the last hour.',
        ),
      );
    } catch (error) {
      replace(body, errorNotice(error));
    }
  }
  await load();
}

// ---------- workspaces ----------

function workspacesPage(main: HTMLElement): void {
  const search = h('input', { type: 'search', name: 'q', placeholder: 'Name or workspace id', 'aria-label': 'Search workspaces' });
  const nameInput = h('input', { type: 'text', name: 'name', required: true, maxlength: '200', id: 'workspace-name' });
  const createMessage = h('div', { class: 'messages' });
  const list = pagedList(
    (after) => call<Page<Workspace>>('GET', '/workspaces', { query: { limit: PAGE_SIZE, after, q: search.value.trim() } }),
    (items) =>
      table(
        ['Workspace', 'Live balance', 'Live available', 'Test balance', 'Test available', 'Created'],
        items.map((w) => [
          h('a', { href: `#/workspaces/${encodeURIComponent(w.id)}` }, h('strong', null, w.name), h('br'), h('small', { class: 'mono' }, w.id)),
          usd(w.wallet.balanceUsd),
          usd(w.wallet.availableUsd),
          usd(w.testWallet.balanceUsd),
          usd(w.testWallet.availableUsd),
          when(w.createdAt),
        ]),
        search.value.trim() ? 'No workspace matches.' : 'No workspace yet: create one above.',
      ),
    'Workspaces',
  );
  append(main, [
    h('h1', null, 'Workspaces'),
    h(
      'form',
      {
        class: 'card inline-form',
        onsubmit: async (event: Event) => {
          event.preventDefault();
          try {
            const created = await call<Workspace>('POST', '/workspaces', { body: { name: nameInput.value } });
            location.hash = `#/workspaces/${encodeURIComponent(created.id)}`;
          } catch (error) {
            replace(createMessage, errorNotice(error));
          }
        },
      },
      h('h2', null, 'Create a workspace'),
      field('Name', nameInput),
      h('button', { type: 'submit', class: 'primary' }, 'Create workspace'),
      createMessage,
    ),
    h(
      'form',
      {
        class: 'filters',
        role: 'search',
        onsubmit: (event: Event) => {
          event.preventDefault();
          list.reload();
        },
      },
      search,
      h('button', { type: 'submit' }, 'Search'),
    ),
    list.element,
  ]);
}

async function workspacePage(main: HTMLElement, id: string): Promise<void> {
  const workspace = await call<Workspace>('GET', `/workspaces/${encodeURIComponent(id)}`);
  const wallets = h('div', { class: 'cards' }, walletCard('Live wallet', workspace.wallet, 'wallet-live'), walletCard('Test wallet', workspace.testWallet, 'wallet-test'));
  const walletMessage = h('div', { class: 'messages' });
  async function refreshWallets(): Promise<void> {
    try {
      const fresh = await call<Workspace>('GET', `/workspaces/${encodeURIComponent(id)}`);
      replace(wallets, walletCard('Live wallet', fresh.wallet, 'wallet-live'), walletCard('Test wallet', fresh.testWallet, 'wallet-test'));
      walletMessage.replaceChildren();
    } catch (error) {
      replace(walletMessage, errorNotice(error));
    }
  }

  // credit
  const amount = h('input', { type: 'number', name: 'amountUsd', min: '0.000001', step: 'any', required: true, inputmode: 'decimal', id: 'credit-amount' });
  const reference = h('input', { type: 'text', name: 'reference', required: true, maxlength: '200', value: newReference(), id: 'credit-reference' });
  const creditEnvironment = select('environment', [
    ['live', 'Live'],
    ['test', 'Test'],
  ]);
  const creditMessage = h('div', { class: 'messages' });
  const creditForm = h(
    'form',
    {
      class: 'card',
      id: 'credit-form',
      onsubmit: async (event: Event) => {
        event.preventDefault();
        const value = Number(amount.value);
        if (!amount.value || !Number.isFinite(value) || value <= 0) {
          replace(creditMessage, notice('error', 'The amount must be a number of USD above 0.'));
          return;
        }
        try {
          const wallet = await call<Wallet>('POST', `/workspaces/${encodeURIComponent(id)}/wallet/credits`, {
            body: { amountUsd: value, reference: reference.value, environment: creditEnvironment.value },
          });
          replace(
            creditMessage,
            notice('ok', `Credit ${reference.value} recorded on the ${creditEnvironment.value} wallet: balance ${usd(wallet.balanceUsd)}, available ${usd(wallet.availableUsd)}.`),
          );
          reference.value = newReference();
          amount.value = '';
          await refreshWallets();
          ledger.reload();
        } catch (error) {
          replace(creditMessage, errorNotice(error));
        }
      },
    },
    h('h2', null, 'Credit'),
    h('p', { class: 'hint' }, 'The reference makes a credit happen once: sending the same reference and amount again changes nothing; another amount is refused.'),
    h('div', { class: 'row' }, field('Amount (USD)', amount), field('Reference', reference), field('Wallet', creditEnvironment)),
    h('button', { type: 'submit', class: 'primary' }, 'Credit'),
    creditMessage,
  );

  // keys
  const keyName = h('input', { type: 'text', name: 'keyName', required: true, maxlength: '200', id: 'key-name' });
  const keyEnvironment = select('keyEnvironment', [
    ['live', 'Live (svc_live_…)'],
    ['test', 'Test (svc_test_…, sandbox)'],
  ]);
  const issued = h('div', { class: 'messages', id: 'issued-key' });
  const keys = pagedList(
    (after) => call<Page<ApiKey>>('GET', `/workspaces/${encodeURIComponent(id)}/api-keys`, { query: { limit: PAGE_SIZE, after } }),
    (items) =>
      table(
        ['Name', 'Prefix', 'Environment', 'Status', 'Created', 'Last used', ''],
        items.map((key) => [
          key.name,
          h('span', { class: 'mono' }, `${key.prefix}…`),
          key.environment,
          badge(key.status),
          when(key.createdAt),
          when(key.lastUsedAt),
          key.status === 'active'
            ? h('button', { type: 'button', class: 'danger small', 'data-key-id': key.id, onclick: () => void revoke(key) }, 'Revoke')
            : h('small', null, `revoked ${when(key.revokedAt)}`),
        ]),
        'No key yet: issue one above.',
      ),
    'API keys',
  );
  const keyMessage = h('div', { class: 'messages' });
  async function revoke(key: ApiKey): Promise<void> {
    const sure = await confirmDialog('Revoke this key?', `“${key.name}” (${key.prefix}…) will be refused from its next request on. This cannot be undone.`, 'Revoke key');
    if (!sure) return;
    try {
      await call<ApiKey>('POST', `/api-keys/${encodeURIComponent(key.id)}/revoke`);
      replace(keyMessage, notice('ok', `Key “${key.name}” revoked.`));
      keys.reload();
    } catch (error) {
      replace(keyMessage, errorNotice(error));
    }
  }
  const keyForm = h(
    'form',
    {
      class: 'card',
      onsubmit: async (event: Event) => {
        event.preventDefault();
        try {
          const key = await call<ApiKey>('POST', `/workspaces/${encodeURIComponent(id)}/api-keys`, { body: { name: keyName.value, environment: keyEnvironment.value } });
          const secret = h('input', { type: 'text', readonly: true, value: key.key ?? '', class: 'mono secret', id: 'issued-key-secret', 'aria-label': 'The new key' });
          const copied = h('span', { role: 'status' });
          replace(
            issued,
            h(
              'div',
              { class: 'notice ok' },
              h('strong', null, `Key “${key.name}” issued. Copy it now: it is shown this once and never again.`),
              h(
                'div',
                { class: 'row' },
                secret,
                h('button', { type: 'button', onclick: async () => (copied.textContent = (await copyText(key.key ?? '', secret)) ? 'Copied.' : 'Could not copy: select the key and copy it by hand.') }, 'Copy'),
                h('button', { type: 'button', onclick: () => issued.replaceChildren() }, 'Done'),
              ),
              copied,
            ),
          );
          keyName.value = '';
          keys.reload();
        } catch (error) {
          replace(issued, errorNotice(error));
        }
      },
    },
    h('h2', null, 'API keys'),
    h('div', { class: 'row' }, field('Key name', keyName), field('Environment', keyEnvironment)),
    h('button', { type: 'submit', class: 'primary' }, 'Issue key'),
    issued,
  );

  // ledger
  const ledgerKind = select('kind', [
    ['', 'Every kind'],
    ['credit', 'credit'],
    ['hold', 'hold'],
    ['capture', 'capture'],
    ['release', 'release'],
    ['adjust', 'adjust'],
  ]);
  const ledgerEnvironment = select('ledgerEnvironment', [
    ['', 'Both wallets'],
    ['live', 'Live'],
    ['test', 'Test'],
  ]);
  const subject = h('input', { type: 'text', name: 'subjectId', placeholder: 'Subject id (omni:…, audio:…)', 'aria-label': 'Subject id' });
  const subjectType = h('input', { type: 'text', name: 'subjectType', placeholder: 'Subject type (omni, audio…)', 'aria-label': 'Subject type' });
  const ledger = pagedList(
    (after) =>
      call<Page<LedgerEntry>>('GET', `/workspaces/${encodeURIComponent(id)}/ledger`, {
        query: { limit: PAGE_SIZE, after, kind: ledgerKind.value, environment: ledgerEnvironment.value, subjectId: subject.value.trim(), subjectType: subjectType.value.trim() },
      }),
    (items) =>
      table(
        ['#', 'Kind', 'Amount', 'Wallet', 'Subject', 'Reference', 'When'],
        items.map((entry) => [
          entry.id,
          badge(entry.kind),
          usd(entry.amountUsd),
          entry.environment,
          entry.subjectId ? h('a', { href: `#/tasks/${encodeURIComponent(entry.subjectId)}`, class: 'mono' }, shortId(entry.subjectId)) : '—',
          entry.reference ?? '—',
          when(entry.createdAt),
        ]),
        'No ledger entry matches.',
      ),
    'Ledger',
  );

  append(main, [
    h('p', { class: 'crumbs' }, h('a', { href: '#/workspaces' }, '← Workspaces')),
    h('div', { class: 'title-row' }, h('h1', null, workspace.name), h('button', { type: 'button', onclick: () => void refreshWallets() }, 'Refresh wallets')),
    h('p', { class: 'hint' }, h('span', { class: 'mono' }, workspace.id), ` · created ${when(workspace.createdAt)} · `, h('a', { href: `#/tasks?workspaceId=${encodeURIComponent(workspace.id)}` }, 'its tasks')),
    wallets,
    walletMessage,
    creditForm,
    keyForm,
    keyMessage,
    keys.element,
    h('h2', null, 'Ledger'),
    h(
      'form',
      {
        class: 'filters',
        onsubmit: (event: Event) => {
          event.preventDefault();
          ledger.reload();
        },
      },
      ledgerKind,
      ledgerEnvironment,
      subject,
      subjectType,
      h('button', { type: 'submit' }, 'Filter'),
    ),
    ledger.element,
  ]);
}

// ---------- tasks ----------

/** Read once per page load from the overview. */
let taskKinds: string[] | undefined;

function hashQuery(): URLSearchParams {
  const at = location.hash.indexOf('?');
  return new URLSearchParams(at >= 0 ? location.hash.slice(at + 1) : '');
}

async function tasksPage(main: HTMLElement): Promise<void> {
  const given = hashQuery();
  // The kinds the service registered (a domain added later shows up without a console change).
  taskKinds ??= (await call<Overview>('GET', '/overview')).taskKinds;
  const kinds = taskKinds;
  const kind = select('kind', [['', 'Every kind'], ...kinds.map((name): [string, string] => [name, name])], given.get('kind') ?? undefined);
  const status = h('input', { type: 'text', name: 'status', placeholder: 'Status (queued, running, succeeded, failed…)', 'aria-label': 'Status', value: given.get('status') ?? '' });
  const workspaceId = h('input', { type: 'text', name: 'workspaceId', placeholder: 'Workspace id', 'aria-label': 'Workspace id', value: given.get('workspaceId') ?? '' });
  const list = pagedList(
    (after) => call<Page<Task>>('GET', '/tasks', { query: { limit: PAGE_SIZE, after, kind: kind.value, status: status.value.trim(), workspaceId: workspaceId.value.trim() } }),
    (items) =>
      table(
        ['Task', 'Kind', 'Model', 'Status', 'Phase', 'Charged', 'Workspace', 'Created'],
        items.map((task) => [
          h('a', { href: `#/tasks/${encodeURIComponent(task.id)}`, class: 'mono' }, shortId(task.id)),
          task.kind,
          task.model,
          badge(task.status),
          task.phase ?? '—',
          usd(task.chargedUsd),
          h('a', { href: `#/workspaces/${encodeURIComponent(task.workspaceId)}`, class: 'mono' }, shortId(task.workspaceId)),
          when(task.createdAt),
        ]),
        'No task matches.',
      ),
    'Tasks',
  );
  append(main, [
    h('h1', null, 'Tasks'),
    h(
      'form',
      {
        class: 'filters',
        onsubmit: (event: Event) => {
          event.preventDefault();
          list.reload();
        },
      },
      kind,
      status,
      workspaceId,
      h('button', { type: 'submit' }, 'Filter'),
    ),
    list.element,
  ]);
}

async function taskPage(main: HTMLElement, id: string): Promise<void> {
  append(main, [h('p', { class: 'crumbs' }, h('a', { href: '#/tasks' }, '← Tasks'))]);
  const task = await call<TaskDetail>('GET', `/tasks/${encodeURIComponent(id)}`);
  const facts: Array<[string, Child]> = [
    ['Kind', task.kind],
    ['Model', task.model],
    ['Status', badge(task.status)],
    ['Phase', task.phase ?? '—'],
    ['Failure reason', task.failureReason ?? '—'],
    ['Workspace', h('a', { href: `#/workspaces/${encodeURIComponent(task.workspaceId)}`, class: 'mono' }, task.workspaceId)],
    ['API key', h('span', { class: 'mono' }, task.apiKeyId)],
    ['Created', when(task.createdAt)],
    ['Updated', when(task.updatedAt)],
  ];
  append(main, [
    h('h1', { class: 'mono' }, task.id),
    task.failureReason ? notice('error', `Failed: ${task.failureReason}`) : null,
    h('div', { class: 'card' }, h('dl', { class: 'facts' }, ...facts.flatMap(([label, value]) => [h('dt', null, label), h('dd', null, value)]))),
    h('h2', null, 'Usage'),
    h(
      'div',
      { class: 'cards' },
      h('div', { class: 'card stat' }, h('h3', null, 'Held now'), h('p', { class: 'figure' }, usd(task.usage.heldUsd))),
      h('div', { class: 'card stat' }, h('h3', null, 'Charged'), h('p', { class: 'figure' }, usd(task.usage.chargedUsd))),
      h('div', { class: 'card stat' }, h('h3', null, 'Measured'), h('p', { class: 'figure' }, usd(task.usage.measuredUsd))),
    ),
    h('h2', null, 'Holds'),
    table(
      ['Hold', 'Status', 'Held', 'Captured', 'Above the hold', 'Wallet', 'Made', 'Resolved'],
      task.holds.map((hold) => [h('span', { class: 'mono' }, shortId(hold.id)), badge(hold.status), usd(hold.amountUsd), usd(hold.capturedUsd), usd(hold.uncollectedUsd), hold.environment, when(hold.createdAt), when(hold.resolvedAt)]),
      'No hold was made for this task.',
    ),
    h('h2', null, 'Ledger entries'),
    table(
      ['#', 'Kind', 'Amount', 'When'],
      task.ledger.map((entry) => [entry.id, badge(entry.kind), usd(entry.amountUsd), when(entry.createdAt)]),
      'No ledger entry for this task.',
    ),
  ]);
}

// ---------- webhook deliveries ----------

function deliveriesPage(main: HTMLElement): void {
  const status = select('status', [
    ['', 'Every status'],
    ['pending', 'pending'],
    ['succeeded', 'succeeded'],
    ['failed', 'failed'],
  ]);
  const endpointId = h('input', { type: 'text', name: 'endpointId', placeholder: 'Endpoint id (webhook:…)', 'aria-label': 'Endpoint id' });
  const message = h('div', { class: 'messages' });
  const list = pagedList(
    (after) => call<Page<Delivery>>('GET', '/webhook-deliveries', { query: { limit: PAGE_SIZE, after, status: status.value, endpointId: endpointId.value.trim() } }),
    (items) =>
      table(
        ['Delivery', 'Event', 'Endpoint', 'Status', 'Attempts', 'Last answer', 'Next attempt', 'Created', ''],
        items.map((delivery) => [
          h('span', { class: 'mono' }, shortId(delivery.id)),
          delivery.eventType,
          h('span', { class: 'mono' }, shortId(delivery.endpointId)),
          badge(delivery.status),
          h('button', { type: 'button', class: 'link-like', 'aria-label': `Attempts of ${delivery.id}`, onclick: () => showAttempts(delivery) }, String(delivery.attempts)),
          delivery.lastStatusCode !== null ? `HTTP ${delivery.lastStatusCode}` : (delivery.lastError ?? '—'),
          when(delivery.nextAttemptAt),
          when(delivery.createdAt),
          delivery.status === 'failed' ? h('button', { type: 'button', class: 'small', onclick: () => void retry(delivery) }, 'Retry now') : '',
        ]),
        'No delivery matches.',
      ),
    'Webhook deliveries',
  );
  const attemptsPanel = h('section', { class: 'attempts', 'aria-label': 'Attempts' });
  function showAttempts(delivery: Delivery): void {
    const attempts = pagedList(
      (after) => call<Page<DeliveryAttempt>>('GET', `/webhook-deliveries/${encodeURIComponent(delivery.id)}/attempts`, { query: { limit: PAGE_SIZE, after } }),
      (items) =>
        table(
          ['#', 'Started', 'Took', 'Answer', 'By'],
          items.map((a) => [a.attempt, when(a.startedAt), `${a.durationMs} ms`, a.statusCode !== null ? `HTTP ${a.statusCode}` : (a.error ?? '—'), a.manual ? 'a person (retry)' : 'the schedule']),
          'No attempt yet.',
        ),
      `Attempts of ${delivery.id}`,
    );
    replace(attemptsPanel, h('h2', null, 'Attempts of ', h('span', { class: 'mono' }, delivery.id)), attempts.element);
    attemptsPanel.scrollIntoView({ block: 'nearest' });
  }
  async function retry(delivery: Delivery): Promise<void> {
    try {
      await call<Delivery>('POST', `/webhook-deliveries/${encodeURIComponent(delivery.id)}/retry`);
      replace(message, notice('ok', `Delivery ${delivery.id} will be attempted again now.`));
      list.reload();
    } catch (error) {
      replace(message, errorNotice(error));
    }
  }
  append(main, [
    h('h1', null, 'Webhook deliveries'),
    h('p', { class: 'hint' }, 'A failed delivery can be retried by hand while its endpoint is enabled and its event is under seven days old.'),
    h(
      'form',
      {
        class: 'filters',
        onsubmit: (event: Event) => {
          event.preventDefault();
          list.reload();
        },
      },
      status,
      endpointId,
      h('button', { type: 'submit' }, 'Filter'),
    ),
    message,
    list.element,
    attemptsPanel,
  ]);
}

window.addEventListener('hashchange', render);
render();
