//! The one place the server is built: the API's routes (`/v1`, health, docs) and the teachers'
//! app (`/` and `/app/…`) composed on one listener, with HSTS and the request metrics around
//! both. [`state`] holds what every request shares; [`metrics`] is the metrics listener.
//!
//! The layers above (the `serve` command, a private calibration service) build an [`AppState`]
//! and call [`bind`]; the API and the app never name each other.

pub mod metrics;
pub mod state;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use warp::Filter;
use warp::http::Method;
use warp::http::header::HeaderValue;
use warp::reply::Response;

pub use state::AppState;
use state::Readiness;

use crate::config::AppConfig;
use crate::store::Store;
use crate::store::rate::Limits;

/// A service's default state: built here, not beside [`AppState`], since the paper limit is the
/// papers module's and that module reads the state.
impl AppState {
    /// The state of a service on `store` with these rate limits, PDF export enabled and the
    /// default paper limit.
    pub fn new(store: Store, limits: Limits) -> AppState {
        AppState {
            store,
            limits,
            typesetter: crate::typeset::Typesetter::with_default_concurrency(true),
            max_papers: crate::papers::DEFAULT_MAX_PAPERS,
            marking: crate::marking::MarkingConfig::default(),
            app: AppConfig::default(),
            readiness: Readiness::default(),
            builds: crate::results::returned::builds::ClassBuilds::default(),
            maths: crate::app::math::Maths::default(),
        }
    }
}

/// The response with `Strict-Transport-Security` when `hsts` (the public URL is `https://`).
fn with_hsts(mut response: Response, hsts: bool) -> Response {
    if hsts {
        response.headers_mut().insert(
            "strict-transport-security",
            HeaderValue::from_static(crate::config::HSTS),
        );
    }
    response
}

/// Binds `addr` (serving the API and the teachers' app) and returns the bound address and the
/// server future (which runs until `shutdown` resolves).
pub async fn bind(
    state: Arc<AppState>,
    addr: SocketAddr,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<(SocketAddr, impl Future<Output = ()>)> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
    // The teachers' app answers `/` and `/app/…`; everything else is the API's. Every response
    // is counted in the metrics under the route label its answerer set, and carries HSTS when the
    // public URL is `https://` (a browser applies it to the whole host).
    let hsts = state.app.hsts;
    let answered = crate::app::routes(state.clone())
        .or(crate::http::routes(state))
        .unify()
        .map(move |response| with_hsts(response, hsts));
    let all = warp::any()
        .map(Instant::now)
        .and(warp::method())
        .and(answered)
        .map(|started: Instant, method: Method, response: Response| {
            let route = response
                .extensions()
                .get::<crate::telemetry::Route>()
                .map_or("unmatched", |r| r.0);
            crate::telemetry::request(
                route,
                method.as_str(),
                response.status().as_u16(),
                started.elapsed(),
            );
            response
        });
    let server = warp::serve(all).incoming(listener).graceful(shutdown).run();
    Ok((local, server))
}
