//! `GET /v1/me`: the calling key and its account.

use std::sync::Arc;

use serde::Serialize;
use warp::Filter;
use warp::filters::BoxedFilter;
use warp::http::StatusCode;
use warp::reply::Response;

use super::{AppState, Op, Principal, Reply, ctx};
use crate::store::rfc3339;

static ME: Op = Op {
    name: "GET /v1/me",
    scopes: &[],
};

#[derive(Serialize)]
struct Identity<'a> {
    user: UserView<'a>,
    key: KeyView<'a>,
}

#[derive(Serialize)]
struct UserView<'a> {
    id: &'a str,
    name: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct KeyView<'a> {
    id: &'a str,
    name: &'a str,
    prefix: &'a str,
    scopes: Vec<&'static str>,
    expires_at: String,
}

/// The identity routes.
pub fn routes(state: Arc<AppState>) -> BoxedFilter<(Response,)> {
    warp::path!("v1" / "me")
        .and(warp::get())
        .and(ctx(state))
        .then(|ctx: super::Ctx| ctx.run(&ME, |_, p: Principal| async move { identity(&p) }))
        .boxed()
}

fn identity(p: &Principal) -> Result<Reply, super::ApiError> {
    Reply::json(
        StatusCode::OK,
        &Identity {
            user: UserView {
                id: &p.user.id,
                name: &p.user.name,
            },
            key: KeyView {
                id: &p.key.id,
                name: &p.key.name,
                prefix: &p.key.prefix,
                scopes: p.key.scopes.iter().map(|s| s.as_str()).collect(),
                expires_at: rfc3339(p.key.expires_at),
            },
        },
    )
}
