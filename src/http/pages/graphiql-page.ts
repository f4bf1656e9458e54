import { pageHead, scriptTags } from './assets';

// The text of the GraphiQL page at /graphiql: its HTML, its own style sheet and its
// start-up script. No inline script (nor style of its own), so that the page's
// Content-Security-Policy allows scripts from this server only. Asset URLs are relative to
// /graphiql, so that the page also works behind a proxy that adds a path prefix.

/** What the start-up script needs to know, baked into it at start-up (JSON is valid JavaScript). */
export interface GraphiQLStartConfig {
  /** the GraphQL endpoint, relative to the page */
  endpoint: string;
  /** the operation the first tab starts with */
  document: string;
  /** the Headers pane's starting text (JSON) */
  headers: string;
  /** text of a header value the person has not filled in yet */
  placeholder: string;
}

/** The URLs (relative to the page) of what the page loads, in order. */
export interface GraphiQLPageAssets {
  styles: string[];
  scripts: string[];
}

const PAGE_TITLE = 'GraphiQL: Help desk GraphQL API (offline explorer)';

export function graphiqlHtml(assets: GraphiQLPageAssets): string {
  return `${pageHead(PAGE_TITLE, assets.styles)}
<body>
<div id="graphiql"><p class="loading">Loading GraphiQL…</p><noscript>GraphiQL needs JavaScript.</noscript></div>
${scriptTags(assets.scripts)}
</body>
</html>
`;
}

/** The page's own rules: GraphiQL fills the window. */
export const PAGE_CSS = `html, body { height: 100%; margin: 0; }
#graphiql { height: 100vh; }
.loading { font: 16px system-ui, sans-serif; padding: 24px; color: #52606d; }
`;

/**
 * GraphiQL on the endpoint, over the UMD globals React, ReactDOM and GraphiQL loaded
 * before it. The fetcher leaves out a header whose value still holds the template's
 * placeholder: GraphiQL sends the Headers pane with its schema introspection too, and a
 * "Bearer <token>" that nobody filled in would be refused with 401, so the schema (and
 * the docs) would not load. Introspection itself needs no credentials.
 */
export function graphiqlStartScript(config: GraphiQLStartConfig): string {
  return `'use strict';
(function () {
  var config = ${JSON.stringify(config)};
  var send = GraphiQL.createFetcher({ url: config.endpoint, enableIncrementalDelivery: false });
  function withoutPlaceholders(headers) {
    var kept = {};
    Object.keys(headers).forEach(function (name) {
      var value = headers[name];
      if (typeof value !== 'string' || value.indexOf(config.placeholder) === -1) kept[name] = value;
    });
    return kept;
  }
  // subscriptions over graphql-ws (its UMD global graphqlWs) on the same path, ws: or wss: as the page;
  // the Headers pane becomes the connection_init payload, one connection per distinct headers
  var wsUrl = new URL(config.endpoint, location.href).href.replace(/^http/, 'ws');
  var wsClients = {};
  function wsClient(headers) {
    var key = JSON.stringify(headers);
    if (!wsClients[key]) wsClients[key] = graphqlWs.createClient({ url: wsUrl, connectionParams: headers, retryAttempts: 0, lazyCloseTimeout: 30000 });
    return wsClients[key];
  }
  function isSubscription(params) {
    return /(^|[}\\s])subscription\\b/.test(String(params.query || '').replace(/#.*$/gm, ''));
  }
  function fetcher(params, options) {
    var headers = withoutPlaceholders((options && options.headers) || {});
    if (isSubscription(params)) return wsClient(headers).iterate(params);
    if (!options || !options.headers) return send(params, options);
    return send(params, Object.assign({}, options, { headers: headers }));
  }
  ReactDOM.createRoot(document.getElementById('graphiql')).render(
    React.createElement(GraphiQL, {
      fetcher: fetcher,
      defaultQuery: config.document,
      defaultHeaders: config.headers,
      defaultEditorToolsVisibility: 'headers',
      shouldPersistHeaders: false,
    }),
  );
})();
`;
}
