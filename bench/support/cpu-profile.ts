// Where a V8 CPU profile's time goes (issue 17: "for any target still not met, the profile that
// shows where the time goes"): busy and idle time, self time by area (one of our folders, a
// package, a Node module, V8's native code or the garbage collector), and the functions with the
// most self and total time. Reads what `node --cpu-prof` and the inspector's Profiler.stop write.
import { relative } from 'node:path';

/** The parts of a `.cpuprofile` this reads (Chrome DevTools protocol, Profiler.Profile). */
export interface CpuProfile {
  nodes: Array<{
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
    children?: number[];
  }>;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  busyMs: number;
  idleMs: number;
  /** Self time by area, largest first, as a share of busy time. */
  areas: Array<{ area: string; share: number }>;
  /** Functions by self time, largest first. */
  self: Array<{ fn: string; share: number }>;
  /** Our functions (src, libs) by total time: their callees included, counted once however deep the recursion. */
  total: Array<{ fn: string; share: number }>;
}

/** V8's pseudo-frames that are not code: their own areas. */
const PSEUDO = new Set(['(garbage collector)', '(program)', '(root)']);

/**
 * Where a frame's code is: its area — `src/modules/<name>` (or `src/<folder>`, `libs/<name>`,
 * `bench`, `test`) for our code wherever it was built to, the package for code under node_modules,
 * the module for Node's own (`node:…`), `(native)` for V8 builtins and native functions (no
 * script) — and the file as the tables show it (our path from the source root, `package/…/file`).
 */
export function locate(url: string, functionName: string, root = process.cwd()): { area: string; file: string } {
  if (PSEUDO.has(functionName)) return { area: functionName, file: '' };
  if (url === '') return { area: '(native)', file: '' };
  if (url.startsWith('node:')) return { area: url.startsWith('node:internal/') ? `node:internal/${url.split('/')[1]}` : url, file: url };
  const path = url.startsWith('file://') ? new URL(url).pathname : url;
  const modules = path.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const [scope, name] = path.slice(modules + '/node_modules/'.length).split('/');
    const pkg = scope!.startsWith('@') ? `${scope}/${name}` : scope!;
    return { area: pkg, file: `${pkg}/…/${path.split('/').pop()}` };
  }
  // Ours, built into dist/ or .build/<name>/: the path from the source root.
  const ours = /(?:^|\/)((?:src|libs|bench|test)\/.*)$/.exec(relative(root, path).replace(/^(?:dist|\.build\/[^/]+)\//, ''));
  if (!ours) return { area: path, file: path };
  const parts = ours[1]!.split('/');
  const depth = parts[0] === 'src' && parts[1] === 'modules' ? 3 : parts[0] === 'src' || parts[0] === 'libs' ? 2 : 1;
  return { area: parts.slice(0, depth).join('/'), file: ours[1]! };
}

/**
 * A frame as the tables name it — its name, file and line (V8's pseudo-frames and native code by
 * name) — with its area, and whether it is our own code (src, libs: the total-time table lists
 * only those). One `locate` per frame.
 */
function frameOf(callFrame: CpuProfile['nodes'][number]['callFrame'], root: string): { area: string; label: string; ours: boolean } {
  const { area, file } = locate(callFrame.url, callFrame.functionName, root);
  const label = file === '' ? callFrame.functionName || area : `${callFrame.functionName || '(anonymous)'} ${file}:${callFrame.lineNumber + 1}`;
  return { area, label, ours: area.startsWith('src/') || area.startsWith('libs/') };
}

const top = (totals: Map<string, number>, busy: number, limit: number): Array<{ key: string; share: number }> =>
  [...totals]
    .sort((a, b) => b[1] - a[1])
    .slice(0, limit)
    .map(([key, micros]) => ({ key, share: busy > 0 ? micros / busy : 0 }));

/** The summary of one profile: `limit` rows per table. */
export function summarizeCpuProfile(profile: CpuProfile, limit = 25, root = process.cwd()): ProfileSummary {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  // Self time per node: each sample's delta belongs to the node sampled.
  const selfOf = new Map<number, number>();
  profile.samples.forEach((id, i) => selfOf.set(id, (selfOf.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));

  let busy = 0;
  let idle = 0;
  const areas = new Map<string, number>();
  const self = new Map<string, number>();
  for (const [id, micros] of selfOf) {
    const { callFrame } = byId.get(id)!;
    if (callFrame.functionName === '(idle)') {
      idle += micros;
      continue;
    }
    busy += micros;
    const { area, label } = frameOf(callFrame, root);
    areas.set(area, (areas.get(area) ?? 0) + micros);
    self.set(label, (self.get(label) ?? 0) + micros);
  }

  // Total time: a node's subtree, credited to its function unless the function is already on the
  // path from the root (recursion and re-entry would count the same time twice). Iterative: deep
  // async stacks overflow a recursive walk.
  const total = new Map<string, number>();
  const subtree = new Map<number, number>();
  const order: number[] = [];
  const root0 = profile.nodes[0]?.id;
  if (root0 !== undefined) {
    const stack = [root0];
    while (stack.length > 0) {
      const id = stack.pop()!;
      order.push(id);
      for (const child of byId.get(id)!.children ?? []) stack.push(child);
    }
    for (const id of order.reverse()) {
      const node = byId.get(id)!;
      let sum = node.callFrame.functionName === '(idle)' ? 0 : (selfOf.get(id) ?? 0);
      for (const child of node.children ?? []) sum += subtree.get(child) ?? 0;
      subtree.set(id, sum);
    }
    const onPath = new Map<string, number>();
    // Entering a node, then (once its children are done) leaving its function's place on the path.
    const walk: Array<{ enter: number } | { leave: string }> = [{ enter: root0 }];
    while (walk.length > 0) {
      const step = walk.pop()!;
      if ('leave' in step) {
        onPath.set(step.leave, onPath.get(step.leave)! - 1);
        continue;
      }
      const node = byId.get(step.enter)!;
      const { label, ours } = frameOf(node.callFrame, root);
      if (ours && !onPath.get(label)) total.set(label, (total.get(label) ?? 0) + subtree.get(step.enter)!);
      onPath.set(label, (onPath.get(label) ?? 0) + 1);
      walk.push({ leave: label });
      for (const child of node.children ?? []) walk.push({ enter: child });
    }
  }

  return {
    busyMs: busy / 1000,
    idleMs: idle / 1000,
    areas: top(areas, busy, limit).map(({ key, share }) => ({ area: key, share })),
    self: top(self, busy, limit).map(({ key, share }) => ({ fn: key, share })),
    total: top(total, busy, limit).map(({ key, share }) => ({ fn: key, share })),
  };
}

const percent = (share: number): string => `${(share * 100).toFixed(1)}%`;

/** The summary as Markdown: a heading line, then the three tables. `perUnit` adds µs per request. */
export function profileMarkdown(title: string, summary: ProfileSummary, perUnit?: { count: number; unit: string }): string {
  const micros = (share: number) => (perUnit && perUnit.count > 0 ? ` | ${((share * summary.busyMs * 1000) / perUnit.count).toFixed(1)}` : '');
  const unitHead = perUnit ? ` | µs per ${perUnit.unit}` : '';
  const unitRule = perUnit ? '|---' : '';
  const table = (head: string, rows: Array<{ name: string; share: number }>) =>
    [`| ${head} | share of busy${unitHead} |`, `|---|---${unitRule}|`, ...rows.map((row) => `| ${row.name.replace(/\|/g, '\\|')} | ${percent(row.share)}${micros(row.share)} |`)].join('\n');
  return [
    `### ${title}`,
    '',
    `Busy ${summary.busyMs.toFixed(0)} ms, idle ${summary.idleMs.toFixed(0)} ms` +
      (perUnit && perUnit.count > 0 ? `; ${perUnit.count} ${perUnit.unit}s, ${((summary.busyMs * 1000) / perUnit.count).toFixed(1)} µs busy per ${perUnit.unit}` : '') +
      '. Busy is the JavaScript thread\'s time outside idle as V8 samples it, not CPU time: time the thread was descheduled inside a call (a socket write that woke its reader on a busy host) counts as that call\'s.',
    '',
    table('area (self time)', summary.areas.map(({ area, share }) => ({ name: area, share }))),
    '',
    table('function (self time)', summary.self.map(({ fn, share }) => ({ name: fn, share }))),
    '',
    table('our function (total time, callees included)', summary.total.map(({ fn, share }) => ({ name: fn, share }))),
    '',
  ].join('\n');
}
