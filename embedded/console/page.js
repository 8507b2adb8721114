// The embedded console (rule CONSOLE-page): plain browser JavaScript served as is (no build step). Once a
// second it reads ../simulator and ../healthz (the admin listener's own routes) and state (the read-only
// feed, rule CONSOLE-feed); every change goes through the simulator's control API. Polling rather than
// Server-Sent Events: each answer is a whole snapshot, so a missed one costs nothing, and no connection
// stays open for shutdown to cut.
/* global document, fetch, setTimeout, clearTimeout */

const POLL_MS = 1000;
const LOG_KEEP = 200;
/** The clock buttons: the feed's distance each one advances by, its label, and why in the outcome. */
const CLOCK_BUTTONS = [
  ['advance-linger', 'nextLingerMs', 'Advance to next linger expiry', 'next linger expiry'],
  ['advance-token', 'tokenExpiryMs', 'Advance past token expiry', 'token lifetime'],
  ['advance-ttl', 'cacheTtlMs', 'Advance past cache TTL', 'cache TTL'],
];
const byId = (id) => document.getElementById(id);
const rows = {};
let lastLine = 0;
let clockAdvance = {};
let timer;
let refreshing = false;
let refreshAgain = false;

/** An HTML element with these properties and children. */
function el(tag, properties = {}, ...children) {
  const element = Object.assign(document.createElement(tag), properties);
  element.append(...children);
  return element;
}

function svg(tag, attributes, content = '') {
  const element = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, value);
  element.textContent = content;
  return element;
}

/** Only a changed text is written, so a screen reader announces only changes. */
function text(id, value) {
  const element = byId(id);
  if (element.textContent !== String(value)) element.textContent = String(value);
}

function say(message, isError) {
  const status = byId('status');
  status.textContent = message;
  status.className = isError ? 'status error' : 'status';
}

function duration(ms) {
  if (ms < 1000) return `${ms} ms`;
  const s = Math.round(ms / 1000);
  if (s < 120) return `${s} s`;
  const min = Math.round(s / 60);
  return min < 120 ? `${min} min` : `${Math.floor(min / 60)} h ${min % 60} min`;
}

async function getJson(path) {
  const response = await fetch(path, { cache: 'no-store' });
  return { status: response.status, body: await response.json() };
}

/** A change through the simulator's API; its Error body, if any, is shown as it came. */
async function change(method, path, body, done) {
  try {
    const response = await fetch(path, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const answer = await response.json();
    if (response.ok) say(done(answer), false);
    else say(`${method} ${path.replace('../', '/')}: ${response.status} ${answer.error}`, true);
  } catch (error) {
    say(`The service did not answer: ${error.message}`, true);
  }
  refresh();
}

function setComponent(name, fields, what) {
  change('PUT', `../simulator/components/${encodeURIComponent(name)}`, fields, (state) => {
    return `${name}: ${what} (${state.state}, latency ${state.latencyMs} ms, fail next ${state.failNext})`;
  });
}

function advance(ms, why) {
  change('POST', '../simulator/clock/advance', { ms }, (clock) => `Clock advanced ${duration(ms)}${why}; now ${clock.now}`);
}

/** One row per component, built once so focus and typed values survive each refresh. */
function componentRow(name) {
  if (rows[name]) return rows[name];
  const row = { state: el('td'), latency: el('td', { className: 'num' }), failNext: el('td', { className: 'num' }) };
  row.toggle = el('button', { type: 'button' });
  row.toggle.addEventListener('click', () => {
    const down = row.toggle.dataset.state === 'up';
    setComponent(name, { state: down ? 'down' : 'up' }, down ? 'taken down' : 'brought up');
  });
  const controls = el('td', {}, row.toggle);
  const numberForm = (field, label, unit) => {
    const input = el('input', { id: `${name}-${field}`, type: 'number', min: '0', step: '1', required: true });
    // Named with its component for a screen reader (each row has the same fields); shown without.
    const hidden = el('span', { className: 'visually-hidden', textContent: `${name} ` });
    const submit = el('button', { type: 'submit', textContent: 'Set' });
    submit.setAttribute('aria-label', `Set ${name} ${label.toLowerCase()}`);
    const form = el(
      'form',
      { className: 'inline' },
      el('label', { htmlFor: input.id }, hidden, unit ? `${label} (${unit})` : label),
      input,
      submit,
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      setComponent(name, { [field]: Number(input.value) }, `${label.toLowerCase()} set to ${input.value}`);
    });
    controls.append(form);
    return input;
  };
  row.latencyInput = numberForm('latencyMs', 'Latency', 'ms');
  row.failInput = numberForm('failNext', 'Fail next');
  const th = el('th', { scope: 'row', textContent: name });
  byId('components').tBodies[0].append(el('tr', {}, th, row.state, row.latency, row.failNext, controls));
  return (rows[name] = row);
}

function showSimulator({ components, clock }) {
  for (const { name, state, latencyMs, failNext } of components) {
    const row = componentRow(name);
    row.state.textContent = state;
    row.state.className = `state-${state}`;
    row.latency.textContent = `${latencyMs} ms`;
    row.failNext.textContent = String(failNext);
    row.toggle.dataset.state = state;
    row.toggle.textContent = state === 'up' ? `Take ${name} down` : `Bring ${name} up`;
    // Typed values are kept while the field has focus; otherwise the field shows the current value.
    if (document.activeElement !== row.latencyInput) row.latencyInput.value = String(latencyMs);
    if (document.activeElement !== row.failInput) row.failInput.value = String(failNext);
  }
  text('clock-now', clock.now);
  text('clock-offset', duration(clock.offsetMs));
  text('clock-timers', clock.pendingTimers);
}

function showHealth(status, report) {
  const failing = (report.nodes || []).filter((node) => node.status !== 'ok').map((node) => `${node.name} ${node.status}`);
  text('health', `Health: ${status} ${report.clean ? 'clean' : 'unhealthy'}${failing.length > 0 ? ` (${failing.join(', ')})` : ''}`);
  byId('health').className = report.clean ? 'health ok' : 'health bad';
}

function showAdvance(distances) {
  clockAdvance = distances;
  for (const [id, field, label] of CLOCK_BUTTONS) {
    const ms = distances[field];
    byId(id).disabled = ms === null;
    text(id, `${label} (${ms === null ? 'no session lingers' : duration(ms)})`);
  }
}

/**
 * The window the feed counted over: a minute (plus at most a sample) while this page polls; since the
 * service started, or since a page last looked, on the first look. The heading and the chart both name it.
 */
function windowName(ms) {
  return ms >= 59000 && ms <= 62000 ? 'last minute' : `last ${duration(ms)}`;
}

function showRequests({ windowMs, byStatus }) {
  text('requests-window', windowName(windowMs));
  const statuses = Object.keys(byStatus).sort();
  const row = (status) =>
    el('tr', {}, el('th', { scope: 'row', textContent: status }), el('td', { className: 'num', textContent: byStatus[status] }));
  const none = el('tr', {}, el('td', { colSpan: 2, className: 'hint', textContent: 'no requests' }));
  byId('requests').tBodies[0].replaceChildren(...(statuses.length === 0 ? [none] : statuses.map(row)));
}

/**
 * Requests and errors per second on a shared scale, one step per sample the feed holds, across the same
 * window as the table: a first look, whose one sample spans the whole window, draws one flat step.
 */
function showChart(series, windowMs) {
  const [width, height, left, bottom, top] = [600, 140, 34, 18, 8];
  // The first sample's base opens the window; the right edge is now.
  const start = series.length > 0 ? series[0].at - series[0].ms : 0;
  const rate = (point, key) => point[key] / (Math.max(point.ms, 1) / 1000);
  const max = Math.max(1, Math.ceil(Math.max(0, ...series.map((point) => rate(point, 'requests')))));
  const x = (at) => (left + ((at - start) / Math.max(windowMs, 1)) * (width - left - 4)).toFixed(1);
  const y = (value) => (top + (1 - value / max) * (height - top - bottom)).toFixed(1);
  const steps = (key) => series.map((point) => `${x(point.at - point.ms)},${y(rate(point, key))} ${x(point.at)},${y(rate(point, key))}`);
  byId('chart').replaceChildren(
    svg('line', { class: 'axis', x1: left, y1: height - bottom, x2: width - 4, y2: height - bottom }),
    svg('line', { class: 'axis', x1: left, y1: top, x2: left, y2: height - bottom }),
    svg('text', { x: 2, y: top + 10 }, `${max}/s`),
    svg('text', { x: left - 12, y: height - bottom }, '0'),
    svg('text', { x: left, y: height - 4 }, `${duration(windowMs)} ago`),
    svg('text', { x: width - 28, y: height - 4 }, 'now'),
    ...(series.length === 0 ? [] : ['requests', 'errors'].map((key) => svg('polyline', { class: key, points: steps(key).join(' ') }))),
  );
  const total = (key) => series.reduce((sum, point) => sum + point[key], 0);
  text('chart-window', windowName(windowMs));
  text('chart-summary', series.length === 0 ? 'no samples yet' : `${total('requests')} requests, ${total('errors')} errors, peak ${max}/s`);
}

/** A pino line as `time level msg` and its other fields; a line that is no JSON object as it came. */
function logItem(line) {
  let parsed = null;
  try {
    parsed = JSON.parse(line);
  } catch {
    // shown as it came
  }
  if (parsed === null || typeof parsed !== 'object') return el('li', { textContent: line });
  const { time, level, msg, ...rest } = parsed;
  const fields = Object.entries(rest).map(([key, value]) => `${key}=${JSON.stringify(value)}`);
  const head = `${String(time || '').slice(11, 23)} ${String(level).padEnd(5)} ${msg}`;
  return el(
    'li',
    { className: String(level) },
    head,
    el('span', { className: 'fields', textContent: fields.length === 0 ? '' : `  ${fields.join(' ')}` }),
  );
}

function showLog(log) {
  const list = byId('log');
  if (log === null) {
    if (list.childElementCount === 0)
      list.append(el('li', { className: 'hint', textContent: 'This process logs elsewhere: no log tail.' }));
    return;
  }
  const atBottom = list.scrollTop + list.clientHeight >= list.scrollHeight - 4;
  list.append(...log.lines.filter((line) => line.seq > lastLine).map((line) => logItem(line.text)));
  while (list.childElementCount > LOG_KEEP) list.firstElementChild.remove();
  lastLine = Math.max(lastLine, log.last);
  if (atBottom) list.scrollTop = list.scrollHeight;
}

/** One refresh at a time: a change asked for during one is refreshed right after it. */
async function refresh() {
  if (refreshing) {
    refreshAgain = true;
    return;
  }
  refreshing = true;
  clearTimeout(timer);
  try {
    const [simulator, health, state] = await Promise.all([
      getJson('../simulator'),
      getJson('../healthz'),
      getJson(`state?after=${lastLine}`),
    ]);
    showSimulator(simulator.body);
    showHealth(health.status, health.body);
    const { counts, advance: distances, requests, series, log } = state.body;
    text('sessions-live', counts.sessionsLive);
    text('sessions-lingering', counts.sessionsLingering);
    text('outbox-pending', counts.outboxPending < 0 ? 'not sampled yet' : counts.outboxPending);
    text('events-published', counts.eventsPublished);
    text('events-announced', counts.eventsAnnounced === null ? 'no log tail' : counts.eventsAnnounced);
    showAdvance(distances);
    showRequests(requests);
    showChart(series, requests.windowMs);
    showLog(log);
    const status = byId('status');
    if (status.classList.contains('error') && status.textContent.includes('did not answer')) say('The service answers again.', false);
  } catch (error) {
    say(`The service did not answer: ${error.message}`, true);
  }
  refreshing = false;
  if (refreshAgain) {
    refreshAgain = false;
    refresh();
  } else {
    timer = setTimeout(refresh, POLL_MS);
  }
}

for (const [id, field, , why] of CLOCK_BUTTONS) {
  byId(id).addEventListener('click', () => {
    if (clockAdvance[field] != null) advance(clockAdvance[field], ` (${why})`);
  });
}
byId('advance-form').addEventListener('submit', (event) => {
  event.preventDefault();
  advance(Math.round(Number(byId('advance-amount').value) * Number(byId('advance-unit').value)), '');
});
byId('reset').addEventListener('click', () => {
  change('POST', '../simulator/reset', {}, () => 'Simulator reset: every component up, real time');
});
refresh();
