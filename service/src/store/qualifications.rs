//! A marker's qualification: the calibrations saved with `examkit marker calibrate --save` (kept
//! as history, the latest of a marker and model counting), and the seeded reference questions the
//! live marker marked since (`--marker-seed-every`), which can spend a qualification.
//!
//! A marker is named as calibration names it: `builtin`, `external` or `openai`, with the model
//! for `openai` (`None` for the others).

use sqlx::Row;
use sqlx::any::AnyRow;

use super::{Durability, Store, StoreError, now_ms};

/// A calibration to save.
#[derive(Debug, Clone, PartialEq)]
pub struct NewQualification {
    /// `builtin`, `external` or `openai`.
    pub marker: String,
    /// The model, for markers that name one.
    pub model: Option<String>,
    /// Criteria compared.
    pub criteria: i64,
    /// Criteria on which the marker agreed with the trusted decisions.
    pub agreed: i64,
    /// Cohen's kappa; `None` where it is undefined.
    pub kappa: Option<f64>,
    /// Awards the trusted decisions do not make.
    pub false_awards: i64,
    /// Awards citing a clean, blank or mark-scheme page.
    pub non_work_page_awards: i64,
    /// Scripts in the reference set.
    pub scripts: i64,
    /// `sha256:` and the hex digest of the reference set's files.
    pub reference_digest: String,
    /// The bar the calibration was run against (`--min-agreement`).
    pub min_agreement: f64,
    /// Whether it met that bar.
    pub passed: bool,
}

/// A saved calibration.
#[derive(Debug, Clone, PartialEq)]
pub struct Qualification {
    /// Its id.
    pub id: String,
    /// What was saved.
    pub saved: NewQualification,
    /// The agreement, `agreed / criteria` (0 with no criterion).
    pub agreement: f64,
    /// When it was saved, Unix milliseconds.
    pub created_at: i64,
}

/// A seeded reference question the live marker marked, compared with its trusted decisions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewSeed {
    /// The qualification in force when it was marked.
    pub qualification_id: String,
    /// `<script>/<label>` of the reference set.
    pub seed: String,
    /// Criteria compared.
    pub criteria: i64,
    /// Criteria on which the marker agreed.
    pub agreed: i64,
    /// Awards the trusted decisions do not make.
    pub false_awards: i64,
    /// Whether the marker failed to mark it (its criteria count as not awarded).
    pub failed: bool,
    /// Whether the seeds had drifted below the bar once it was counted.
    pub drifted: bool,
}

/// A saved seed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seed {
    /// What was saved.
    pub saved: NewSeed,
    /// When, Unix milliseconds.
    pub created_at: i64,
}

const QUALIFICATION_COLUMNS: &str = "id, marker, model, criteria, agreed, kappa, false_awards, \
     non_work_page_awards, scripts, reference_digest, min_agreement, passed, created_at";

fn qualification(row: &AnyRow) -> Result<Qualification, StoreError> {
    let criteria: i64 = row.try_get("criteria")?;
    let agreed: i64 = row.try_get("agreed")?;
    Ok(Qualification {
        id: row.try_get("id")?,
        agreement: if criteria > 0 {
            agreed as f64 / criteria as f64
        } else {
            0.0
        },
        created_at: row.try_get("created_at")?,
        saved: NewQualification {
            marker: row.try_get("marker")?,
            model: row.try_get("model")?,
            criteria,
            agreed,
            kappa: row.try_get("kappa")?,
            false_awards: row.try_get("false_awards")?,
            non_work_page_awards: row.try_get("non_work_page_awards")?,
            scripts: row.try_get("scripts")?,
            reference_digest: row.try_get("reference_digest")?,
            min_agreement: row.try_get("min_agreement")?,
            passed: row.try_get::<i64, _>("passed")? != 0,
        },
    })
}

fn seed(row: &AnyRow) -> Result<Seed, StoreError> {
    Ok(Seed {
        created_at: row.try_get("created_at")?,
        saved: NewSeed {
            qualification_id: row.try_get("qualification_id")?,
            seed: row.try_get("seed")?,
            criteria: row.try_get("criteria")?,
            agreed: row.try_get("agreed")?,
            false_awards: row.try_get("false_awards")?,
            failed: row.try_get::<i64, _>("failed")? != 0,
            drifted: row.try_get::<i64, _>("drifted")? != 0,
        },
    })
}

impl Store {
    /// Saves a calibration: it is the marker and model's latest from now on.
    pub async fn save_qualification(
        &self,
        new: &NewQualification,
    ) -> Result<Qualification, StoreError> {
        let id = uuid::Uuid::new_v4().to_string();
        let now = now_ms();
        let agreement = if new.criteria > 0 {
            new.agreed as f64 / new.criteria as f64
        } else {
            0.0
        };
        self.execute_write(
            Durability::Saved,
            sqlx::query(
                "INSERT INTO marker_qualifications (id, marker, model, criteria, agreed, agreement, \
                 kappa, false_awards, non_work_page_awards, scripts, reference_digest, \
                 min_agreement, passed, created_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
            )
            .bind(&id)
            .bind(&new.marker)
            .bind(&new.model)
            .bind(new.criteria)
            .bind(new.agreed)
            .bind(agreement)
            .bind(new.kappa)
            .bind(new.false_awards)
            .bind(new.non_work_page_awards)
            .bind(new.scripts)
            .bind(&new.reference_digest)
            .bind(new.min_agreement)
            .bind(i64::from(new.passed))
            .bind(now),
        )
        .await?;
        Ok(Qualification {
            id,
            saved: new.clone(),
            agreement,
            created_at: now,
        })
    }

    /// Every saved calibration of `marker` and `model`, the latest first.
    pub async fn qualifications(
        &self,
        marker: &str,
        model: Option<&str>,
    ) -> Result<Vec<Qualification>, StoreError> {
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {QUALIFICATION_COLUMNS} FROM marker_qualifications \
             WHERE marker = $1 AND COALESCE(model, '') = $2 ORDER BY created_at DESC, id DESC"
        )))
        .bind(marker)
        .bind(model.unwrap_or(""))
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(qualification).collect()
    }

    /// The latest saved calibration of `marker` and `model`, the one that counts.
    pub async fn latest_qualification(
        &self,
        marker: &str,
        model: Option<&str>,
    ) -> Result<Option<Qualification>, StoreError> {
        let row = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {QUALIFICATION_COLUMNS} FROM marker_qualifications \
             WHERE marker = $1 AND COALESCE(model, '') = $2 \
             ORDER BY created_at DESC, id DESC LIMIT 1"
        )))
        .bind(marker)
        .bind(model.unwrap_or(""))
        .fetch_optional(self.pool())
        .await?;
        row.as_ref().map(qualification).transpose()
    }

    /// Saves a seed the live marker marked.
    pub async fn save_seed(&self, new: &NewSeed) -> Result<Seed, StoreError> {
        let now = now_ms();
        self.execute_write(
            Durability::Saved,
            sqlx::query(
                "INSERT INTO marker_seeds (id, qualification_id, seed, criteria, agreed, \
                 false_awards, failed, drifted, created_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            )
            .bind(uuid::Uuid::new_v4().to_string())
            .bind(&new.qualification_id)
            .bind(&new.seed)
            .bind(new.criteria)
            .bind(new.agreed)
            .bind(new.false_awards)
            .bind(i64::from(new.failed))
            .bind(i64::from(new.drifted))
            .bind(now),
        )
        .await?;
        Ok(Seed {
            saved: new.clone(),
            created_at: now,
        })
    }

    /// The last `count` seeds counted against a qualification, the latest first.
    pub async fn recent_seeds(
        &self,
        qualification_id: &str,
        count: i64,
    ) -> Result<Vec<Seed>, StoreError> {
        let rows = sqlx::query(
            "SELECT qualification_id, seed, criteria, agreed, false_awards, failed, drifted, \
             created_at FROM marker_seeds WHERE qualification_id = $1 \
             ORDER BY created_at DESC, id DESC LIMIT $2",
        )
        .bind(qualification_id)
        .bind(count)
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(seed).collect()
    }

    /// The first seed that found the marker drifted, of a qualification: once there is one, the
    /// qualification is spent.
    pub async fn drifted_seed(&self, qualification_id: &str) -> Result<Option<Seed>, StoreError> {
        let row = sqlx::query(
            "SELECT qualification_id, seed, criteria, agreed, false_awards, failed, drifted, \
             created_at FROM marker_seeds WHERE qualification_id = $1 AND drifted = 1 \
             ORDER BY created_at, id LIMIT 1",
        )
        .bind(qualification_id)
        .fetch_optional(self.pool())
        .await?;
        row.as_ref().map(seed).transpose()
    }
}
