//! A builder of dynamically assembled SQL: the statement's text with `$n` placeholders and the
//! values to bind to them, in order.

use sqlx::any::{AnyArguments, AnyRow};
use sqlx::{Any, FromRow};

/// A bound parameter of a dynamically built query.
enum Param {
    Text(String),
    Int(i64),
}

/// Builds SQL with `$n` placeholders and the values to bind.
#[derive(Default)]
pub(super) struct Sql {
    text: String,
    params: Vec<Param>,
}

impl Sql {
    pub(super) fn push(&mut self, text: &str) {
        self.text.push_str(text);
    }

    pub(super) fn text(&mut self, value: impl Into<String>) {
        self.params.push(Param::Text(value.into()));
        self.text.push_str(&format!("${}", self.params.len()));
    }

    /// `(<p1>, <p2>, …)`: each value a text parameter.
    pub(super) fn text_list(&mut self, values: &[String]) {
        self.push("(");
        for (i, value) in values.iter().enumerate() {
            if i > 0 {
                self.push(", ");
            }
            self.text(value.as_str());
        }
        self.push(")");
    }

    pub(super) fn int(&mut self, value: i64) {
        self.params.push(Param::Int(value));
        self.text.push_str(&format!("${}", self.params.len()));
    }

    /// The statement, for a query returning no rows to read.
    pub(super) fn query(&self) -> sqlx::query::Query<'_, Any, AnyArguments> {
        let mut query = sqlx::query(sqlx::AssertSqlSafe(self.text.as_str()));
        for param in &self.params {
            query = match param {
                Param::Text(v) => query.bind(v.as_str()),
                Param::Int(v) => query.bind(*v),
            };
        }
        query
    }

    /// The statement, its rows read as `T`.
    pub(super) fn query_as<T>(&self) -> sqlx::query::QueryAs<'_, Any, T, AnyArguments>
    where
        T: for<'r> FromRow<'r, AnyRow>,
    {
        let mut query = sqlx::query_as(sqlx::AssertSqlSafe(self.text.as_str()));
        for param in &self.params {
            query = match param {
                Param::Text(v) => query.bind(v.as_str()),
                Param::Int(v) => query.bind(*v),
            };
        }
        query
    }
}
