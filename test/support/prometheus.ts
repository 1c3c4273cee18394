/** One sample line of a Prometheus text exposition, e.g. `svc_wallet_open_holds 3`. */
export function metricSample(text: string, name: string, labels = ''): number | undefined {
  const escaped = `${name}${labels}`.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const match = new RegExp(`^${escaped} (\\S+)$`, 'm').exec(text);
  return match ? Number(match[1]) : undefined;
}
