#pragma once
// The web console: GET / is its page, GET /console/<file> its scripts, styles
// and icon, all from the bytes compiled into the binary (console_assets.h).
// The page is public; it holds no data. Everything it shows comes from the
// JSON API (json_rpc.h), which it calls from the browser with the API key
// the user types (kept in the tab's sessionStorage), so keys and roles apply
// to the console exactly as to any other client. The responses carry a
// Content-Security-Policy that allows only the server's own scripts, styles
// and connections (no inline script, nothing from elsewhere).

namespace httplib {
class Server;
}

namespace neodb::api {

// Adds the console's routes to `server`.
void AddConsoleRoutes(httplib::Server& server);

}  // namespace neodb::api
