//! The metrics listener (`--metrics-listen`): `GET /metrics` in Prometheus's text format, on an
//! address of its own, kept off the public listener. Each scrape first reads the gauges that are
//! read then ([`crate::telemetry`] names them): connection pools, the job queue and the password
//! checks.

use std::net::SocketAddr;

use metrics_exporter_prometheus::PrometheusHandle;
use warp::Filter;

use crate::store::Store;

/// Reads the gauges that are read at scrape time: connection pools, the job queue and the
/// password checks.
async fn refresh(store: &Store) {
    let checks = crate::password::checks::gauges();
    metrics::gauge!("examkit_password_checks_in_flight").set(checks.in_flight as f64);
    metrics::gauge!("examkit_password_checks_in_flight_max").set(checks.most_in_flight as f64);
    metrics::gauge!("examkit_password_check_permits").set(checks.permits as f64);
    for (pool, open, idle) in store.pool_stats() {
        metrics::gauge!("examkit_db_connections", "pool" => pool, "state" => "open")
            .set(f64::from(open));
        metrics::gauge!("examkit_db_connections", "pool" => pool, "state" => "idle")
            .set(idle as f64);
    }
    match store.job_counts().await {
        Ok(counts) => {
            for (kind, state, n) in counts {
                metrics::gauge!("examkit_jobs", "kind" => kind, "state" => state).set(n as f64);
            }
        }
        Err(e) => tracing::warn!(error = %e, "counting jobs for metrics failed"),
    }
}

/// Serves `GET /metrics` on `addr` until `shutdown` resolves; returns the bound address and the
/// server future.
pub async fn serve(
    handle: PrometheusHandle,
    store: Store,
    addr: SocketAddr,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<(SocketAddr, impl std::future::Future<Output = ()>)> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
    let route = warp::path!("metrics").and(warp::get()).then(move || {
        let (handle, store) = (handle.clone(), store.clone());
        async move {
            refresh(&store).await;
            handle.run_upkeep();
            warp::reply::with_header(
                handle.render(),
                "content-type",
                "text/plain; version=0.0.4; charset=utf-8",
            )
        }
    });
    let server = warp::serve(route)
        .incoming(listener)
        .graceful(shutdown)
        .run();
    Ok((local, server))
}
