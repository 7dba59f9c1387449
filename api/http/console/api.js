// The console's one way to the server: the JSON API (POST /v1/rpc/...) and
// /metrics, with the API key the user typed. The key lives in this tab's
// sessionStorage only (gone when the tab closes, never sent anywhere but this
// server), and every API call carries it, so the console has exactly the
// rights of the key, as any other client.

const KEY = 'neodb.apiKey';

export function apiKey() {
  return sessionStorage.getItem(KEY) || '';
}

export function setApiKey(key) {
  if (key) sessionStorage.setItem(KEY, key);
  else sessionStorage.removeItem(KEY);
}

// An error answer of the API: its HTTP status and the server's message.
export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

// Runs Service.Method ("Search", "NearText") on `body`; the response message,
// or throws ApiError.
export async function rpc(service, method, body = {}) {
  const headers = { 'Content-Type': 'application/json' };
  const key = apiKey();
  if (key) headers.Authorization = 'Bearer ' + key;
  let res;
  try {
    res = await fetch(`/v1/rpc/${service}/${method}`, {
      method: 'POST', headers, body: JSON.stringify(body),
    });
  } catch (e) {
    throw new ApiError(0, 'the server did not answer (' + e.message + ')');
  }
  const text = await res.text();
  let json = null;
  try {
    json = JSON.parse(text);
  } catch (e) {
    json = null;
  }
  if (!res.ok) {
    const msg = json && json.error ? json.error.message : text.slice(0, 200);
    throw new ApiError(res.status, `${service}.${method}: ${msg}`);
  }
  return json;
}

// The server's Prometheus text (public, as /metrics is for any scraper).
export async function metricsText() {
  const res = await fetch('/metrics');
  if (!res.ok) throw new ApiError(res.status, '/metrics answered ' + res.status);
  return res.text();
}
