// A realtime client in its own process, so a test can kill it (SIGKILL: no close frame). Argv: url, token.
import WebSocket from 'ws';

const [url, token] = process.argv.slice(2);
const ws = new WebSocket(url!);
ws.on('open', () => ws.send(JSON.stringify({ type: 'session.authenticate', token })));
ws.on('message', (data) => process.send?.(JSON.parse(data.toString())));
ws.on('close', (code) => process.send?.({ type: 'closed', code }));
