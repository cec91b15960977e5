/** The small form a browser signs in to the queue dashboard with (no script, no outside asset). */

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

export function loginPage(action: string, message?: string): string {
  const notice = message ? `<p role="alert">${escapeHtml(message)}</p>` : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>porter queues: sign in</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font-family:system-ui,sans-serif;max-width:26rem;margin:4rem auto;padding:0 1rem}
input,button{font:inherit;padding:.4rem;width:100%;box-sizing:border-box;margin:.3rem 0}
[role=alert]{color:#a00}</style></head>
<body><h1>porter queues</h1>
<p>The raw BullMQ view of the import and export queues. Sign in with PORTER_API_TOKEN or a token from porter tokens create.</p>
${notice}<form method="post" action="${escapeHtml(action)}">
<label for="token">API token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required autofocus>
<button type="submit">Sign in</button></form></body></html>
`;
}
