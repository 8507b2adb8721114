/* global document, window, fetch, URL, setTimeout, clearTimeout */
// The embedded console (rule CONSOLE-page): plain browser JavaScript, served as is (no build step).
// It polls once a second: GET ../simulator and ../healthz (the admin listener's own routes) and
// GET state (the read-only feed: counts, requests, the last log lines). Every change goes through the
// simulator's control API: PUT ../simulator/components/{name}, POST ../simulator/clock/advance,
// POST ../simulator/reset. Polling rather than Server-Sent Events: each answer is a whole snapshot,
// so a missed one costs nothing, and no connection stays open for shutdown to cut.
'use strict';

(function () {
  var POLL_MS = 1000;
  var LOG_KEEP = 200;
  var api = function (path) {
    return new URL(path, window.location.href).href;
  };
  var byId = function (id) {
    return document.getElementById(id);
  };
  var lastLine = 0;
  var clockAdvance = { linger: null, token: null, ttl: null };
  var rows = {};
  var timer;
  var refreshing = false;
  var refreshAgain = false;

  function text(id, value) {
    var element = byId(id);
    if (element.textContent !== String(value)) element.textContent = String(value);
  }

  function say(message, isError) {
    var status = byId('status');
    status.textContent = message;
    status.className = isError ? 'status error' : 'status';
  }

  function duration(ms) {
    if (ms < 1000) return ms + ' ms';
    var s = Math.round(ms / 1000);
    if (s < 120) return s + ' s';
    var min = Math.round(s / 60);
    if (min < 120) return min + ' min';
    return Math.floor(min / 60) + ' h ' + (min % 60) + ' min';
  }

  async function getJson(path) {
    var response = await fetch(api(path), { cache: 'no-store' });
    return { status: response.status, body: await response.json() };
  }

  /** A change through the simulator's API; its Error body, if any, is shown as it came. */
  async function change(method, path, body, done) {
    try {
      var response = await fetch(api(path), {
        method: method,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      var answer = await response.json();
      if (!response.ok) say(method + ' ' + path.replace('../', '/') + ': ' + response.status + ' ' + answer.error, true);
      else say(done(answer), false);
    } catch (error) {
      say('The service did not answer: ' + error.message, true);
    }
    refresh();
  }

  function setComponent(name, fields, what) {
    change('PUT', '../simulator/components/' + encodeURIComponent(name), fields, function (state) {
      return name + ': ' + what + ' (' + state.state + ', latency ' + state.latencyMs + ' ms, fail next ' + state.failNext + ')';
    });
  }

  function advance(ms, why) {
    change('POST', '../simulator/clock/advance', { ms: ms }, function (clock) {
      return 'Clock advanced ' + duration(ms) + why + '; now ' + clock.now;
    });
  }

  /** One row per component, built once so focus and typed values survive each refresh. */
  function componentRow(name) {
    if (rows[name]) return rows[name];
    var row = document.createElement('tr');
    var cell = function () {
      var td = document.createElement('td');
      row.appendChild(td);
      return td;
    };
    var th = document.createElement('th');
    th.scope = 'row';
    th.textContent = name;
    row.appendChild(th);
    var state = cell();
    var latency = cell();
    latency.className = 'num';
    var failNext = cell();
    failNext.className = 'num';
    var controls = cell();

    var toggle = document.createElement('button');
    toggle.type = 'button';
    toggle.addEventListener('click', function () {
      var down = toggle.dataset.state === 'up';
      setComponent(name, { state: down ? 'down' : 'up' }, down ? 'taken down' : 'brought up');
    });
    controls.appendChild(toggle);

    var numberForm = function (field, label, unit) {
      var form = document.createElement('form');
      form.className = 'inline';
      var id = name + '-' + field;
      // Named with its component for a screen reader (each row has the same fields); shown without.
      var labelElement = document.createElement('label');
      labelElement.htmlFor = id;
      var hidden = document.createElement('span');
      hidden.className = 'visually-hidden';
      hidden.textContent = name + ' ';
      labelElement.append(hidden, unit ? label + ' (' + unit + ')' : label);
      var input = document.createElement('input');
      input.id = id;
      input.type = 'number';
      input.min = '0';
      input.step = '1';
      input.required = true;
      var submit = document.createElement('button');
      submit.type = 'submit';
      submit.textContent = 'Set';
      submit.setAttribute('aria-label', 'Set ' + name + ' ' + label.toLowerCase());
      form.append(labelElement, input, submit);
      form.addEventListener('submit', function (event) {
        event.preventDefault();
        var fields = {};
        fields[field] = Number(input.value);
        setComponent(name, fields, label.toLowerCase() + ' set to ' + input.value);
      });
      controls.appendChild(form);
      return input;
    };
    var latencyInput = numberForm('latencyMs', 'Latency', 'ms');
    var failInput = numberForm('failNext', 'Fail next');
    byId('components').tBodies[0].appendChild(row);
    rows[name] = { state: state, latency: latency, failNext: failNext, toggle: toggle, latencyInput: latencyInput, failInput: failInput };
    return rows[name];
  }

  function showSimulator(simulator) {
    simulator.components.forEach(function (component) {
      var row = componentRow(component.name);
      row.state.textContent = component.state;
      row.state.className = 'state-' + component.state;
      row.latency.textContent = component.latencyMs + ' ms';
      row.failNext.textContent = String(component.failNext);
      row.toggle.dataset.state = component.state;
      row.toggle.textContent = component.state === 'up' ? 'Take ' + component.name + ' down' : 'Bring ' + component.name + ' up';
      // Typed values are kept while the field has focus; otherwise the field shows the current value.
      if (document.activeElement !== row.latencyInput) row.latencyInput.value = String(component.latencyMs);
      if (document.activeElement !== row.failInput) row.failInput.value = String(component.failNext);
    });
    text('clock-now', simulator.clock.now);
    text('clock-offset', duration(simulator.clock.offsetMs));
    text('clock-timers', simulator.clock.pendingTimers);
  }

  function showHealth(status, report) {
    var health = byId('health');
    var failing = (report.nodes || []).filter(function (node) {
      return node.status !== 'ok';
    });
    var message =
      'Health: ' +
      status +
      (report.clean ? ' clean' : ' unhealthy') +
      (failing.length > 0
        ? ' (' +
          failing
            .map(function (node) {
              return node.name + ' ' + node.status;
            })
            .join(', ') +
          ')'
        : '');
    if (health.textContent !== message) health.textContent = message;
    health.className = report.clean ? 'health ok' : 'health bad';
  }

  function showAdvance(advanceTo) {
    clockAdvance = { linger: advanceTo.nextLingerMs, token: advanceTo.tokenExpiryMs, ttl: advanceTo.cacheTtlMs };
    var linger = byId('advance-linger');
    linger.disabled = advanceTo.nextLingerMs === null;
    text(
      'advance-linger',
      advanceTo.nextLingerMs === null
        ? 'Advance to next linger expiry (no session lingers)'
        : 'Advance to next linger expiry (' + duration(advanceTo.nextLingerMs) + ')',
    );
    byId('advance-token').disabled = false;
    text('advance-token', 'Advance past token expiry (' + duration(advanceTo.tokenExpiryMs) + ')');
    byId('advance-ttl').disabled = false;
    text('advance-ttl', 'Advance past cache TTL (' + duration(advanceTo.cacheTtlMs) + ')');
  }

  function showRequests(requests) {
    // About a minute while the page polls; shorter just after start, longer after nobody looked.
    text(
      'requests-window',
      requests.windowMs >= 59000 && requests.windowMs <= 62000 ? 'last minute' : 'last ' + duration(requests.windowMs),
    );
    var body = byId('requests').tBodies[0];
    var statuses = Object.keys(requests.byStatus).sort();
    body.replaceChildren();
    if (statuses.length === 0) {
      var empty = document.createElement('tr');
      var cell = document.createElement('td');
      cell.colSpan = 2;
      cell.className = 'hint';
      cell.textContent = 'no requests';
      empty.appendChild(cell);
      body.appendChild(empty);
    }
    statuses.forEach(function (status) {
      var row = document.createElement('tr');
      var name = document.createElement('th');
      name.scope = 'row';
      name.textContent = status;
      var count = document.createElement('td');
      count.className = 'num';
      count.textContent = String(requests.byStatus[status]);
      row.append(name, count);
      body.appendChild(row);
    });
  }

  var SVG = 'http://www.w3.org/2000/svg';
  function svg(tag, attributes) {
    var element = document.createElementNS(SVG, tag);
    Object.keys(attributes).forEach(function (key) {
      element.setAttribute(key, attributes[key]);
    });
    return element;
  }

  /** Requests and errors per second over the last minute, as two lines on a shared scale. */
  function showChart(series) {
    var chart = byId('chart');
    var width = 600;
    var height = 140;
    var left = 34;
    var bottom = 18;
    var top = 8;
    var rates = series.map(function (point) {
      var seconds = Math.max(point.ms, 1) / 1000;
      return { at: point.at, requests: point.requests / seconds, errors: point.errors / seconds };
    });
    var max = Math.max(
      1,
      Math.ceil(
        Math.max.apply(
          null,
          [0].concat(
            rates.map(function (r) {
              return r.requests;
            }),
          ),
        ),
      ),
    );
    var end = rates.length > 0 ? rates[rates.length - 1].at : 0;
    var x = function (at) {
      return (left + ((at - (end - 60000)) / 60000) * (width - left - 4)).toFixed(1);
    };
    var y = function (value) {
      return (top + (1 - value / max) * (height - top - bottom)).toFixed(1);
    };
    var children = [
      svg('line', { class: 'axis', x1: left, y1: height - bottom, x2: width - 4, y2: height - bottom }),
      svg('line', { class: 'axis', x1: left, y1: top, x2: left, y2: height - bottom }),
    ];
    var label = function (content, attributes) {
      var element = svg('text', attributes);
      element.textContent = content;
      return element;
    };
    children.push(label(String(max) + '/s', { x: 2, y: top + 10 }), label('0', { x: left - 12, y: height - bottom }));
    children.push(label('60 s ago', { x: left, y: height - 4 }), label('now', { x: width - 28, y: height - 4 }));
    ['requests', 'errors'].forEach(function (key) {
      if (rates.length === 0) return;
      var points = rates
        .map(function (r) {
          return x(r.at) + ',' + y(r[key]);
        })
        .join(' ');
      children.push(svg('polyline', { class: key, points: points }));
    });
    chart.replaceChildren.apply(chart, children);
    var totalRequests = series.reduce(function (sum, point) {
      return sum + point.requests;
    }, 0);
    var totalErrors = series.reduce(function (sum, point) {
      return sum + point.errors;
    }, 0);
    text(
      'chart-summary',
      series.length === 0 ? 'no samples yet' : totalRequests + ' requests, ' + totalErrors + ' errors, peak ' + max + '/s',
    );
  }

  function showLog(log) {
    var list = byId('log');
    if (log === null) {
      if (list.childElementCount === 0) {
        var note = document.createElement('li');
        note.className = 'hint';
        note.textContent = 'This process logs elsewhere: no log tail.';
        list.appendChild(note);
      }
      return;
    }
    var atBottom = list.scrollTop + list.clientHeight >= list.scrollHeight - 4;
    log.lines.forEach(function (line) {
      if (line.seq <= lastLine) return;
      var item = document.createElement('li');
      var parsed;
      try {
        parsed = JSON.parse(line.text);
      } catch {
        parsed = null;
      }
      if (parsed === null || typeof parsed !== 'object') {
        item.textContent = line.text;
      } else {
        item.className = String(parsed.level);
        var rest = Object.keys(parsed).filter(function (key) {
          return key !== 'time' && key !== 'level' && key !== 'msg';
        });
        var head = String(parsed.time || '').slice(11, 23) + ' ' + String(parsed.level).padEnd(5) + ' ' + parsed.msg;
        var fields = document.createElement('span');
        fields.className = 'fields';
        fields.textContent =
          rest.length === 0
            ? ''
            : '  ' +
              rest
                .map(function (key) {
                  return key + '=' + JSON.stringify(parsed[key]);
                })
                .join(' ');
        item.append(head, fields);
      }
      list.appendChild(item);
    });
    while (list.childElementCount > LOG_KEEP) list.removeChild(list.firstElementChild);
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
      var results = await Promise.all([getJson('../simulator'), getJson('../healthz'), getJson('state?after=' + lastLine)]);
      showSimulator(results[0].body);
      showHealth(results[1].status, results[1].body);
      var state = results[2].body;
      text('sessions-live', state.counts.sessionsLive);
      text('sessions-lingering', state.counts.sessionsLingering);
      text('outbox-pending', state.counts.outboxPending < 0 ? 'not sampled yet' : state.counts.outboxPending);
      text('events-published', state.counts.eventsPublished);
      text('events-announced', state.counts.eventsAnnounced === null ? 'no log tail' : state.counts.eventsAnnounced);
      showAdvance(state.advance);
      showRequests(state.requests);
      showChart(state.series);
      showLog(state.log);
      if (byId('status').classList.contains('error') && byId('status').textContent.indexOf('did not answer') >= 0)
        say('The service answers again.', false);
    } catch (error) {
      say('The service did not answer: ' + error.message, true);
    }
    refreshing = false;
    if (refreshAgain) {
      refreshAgain = false;
      refresh();
    } else {
      timer = setTimeout(refresh, POLL_MS);
    }
  }

  byId('advance-linger').addEventListener('click', function () {
    if (clockAdvance.linger !== null) advance(clockAdvance.linger, ' (next linger expiry)');
  });
  byId('advance-token').addEventListener('click', function () {
    if (clockAdvance.token !== null) advance(clockAdvance.token, ' (token lifetime)');
  });
  byId('advance-ttl').addEventListener('click', function () {
    if (clockAdvance.ttl !== null) advance(clockAdvance.ttl, ' (cache TTL)');
  });
  byId('advance-form').addEventListener('submit', function (event) {
    event.preventDefault();
    advance(Math.round(Number(byId('advance-amount').value) * Number(byId('advance-unit').value)), '');
  });
  byId('reset').addEventListener('click', function () {
    change('POST', '../simulator/reset', {}, function () {
      return 'Simulator reset: every component up, real time';
    });
  });
  refresh();
})();
