//! Making a class set, whoever asks: the paper revision's PDFs are prepared, every copy is
//! typeset with its codes (and its student's name on a roster), and the set is saved with its
//! print run. `POST /v1/class-sets` and the app's "print a class" form both come here.

use crate::error::ApiError;
use crate::server::state::AppState;
use crate::store::class_sets::{CopyRow, NewSetRow, SetRow};
use crate::store::now_ms;

use super::NewClassSet;

/// Makes the set `request` asks for, for the account `user_id`: the saved set and its copies.
pub async fn create(
    state: &AppState,
    user_id: &str,
    request: &NewClassSet,
) -> Result<(SetRow, Vec<CopyRow>), ApiError> {
    if !state.typesetter.export_enabled() {
        return Err(ApiError::PdfExportDisabled);
    }
    let (paper, bank) =
        crate::papers::ensure_exports(state, user_id, &request.paper_id, request.revision).await?;
    let document = crate::papers::document(
        state,
        &request.paper_id,
        request.revision,
        &paper.content,
        &bank,
    )
    .await?;
    let id = uuid::Uuid::new_v4();
    let set = examkit_pdf::ClassSetDocument {
        run_id: id,
        copies: request.copies.clone(),
    };
    let rendered = state
        .typesetter
        .render_class_set(document, set)
        .await
        .map_err(|e| crate::papers::typeset_failure(e, "the class set was not typeset"))?;
    let copies: Vec<CopyRow> = request
        .copies
        .iter()
        .map(|c| CopyRow {
            copy: i64::from(c.copy),
            name: c.name.clone(),
            candidate_number: c.candidate_number.clone(),
        })
        .collect();
    let id = id.hyphenated().to_string();
    let title = request.title.as_deref().unwrap_or(&paper.content.title);
    state
        .store
        .create_class_set(
            &NewSetRow {
                id: &id,
                user_id,
                paper_id: &request.paper_id,
                revision: request.revision,
                title,
                named: copies.iter().any(|c| c.name.is_some()),
                paper_pages: i64::from(rendered.paper_pages),
                pages_per_copy: i64::from(rendered.pages_per_copy),
                copies: &copies,
                created_at: now_ms(),
            },
            rendered.pdf,
        )
        .await?;
    let set = state
        .store
        .class_set(user_id, &id)
        .await?
        .ok_or(ApiError::Internal)?;
    Ok((set, copies))
}

/// The set's extra answer sheet (coded for the set's run, for work that overflows a page).
pub async fn extra_sheet(state: &AppState, set: &SetRow) -> Result<Vec<u8>, ApiError> {
    if !state.typesetter.export_enabled() {
        return Err(ApiError::PdfExportDisabled);
    }
    let run_id = uuid::Uuid::parse_str(&set.id).map_err(|_| ApiError::Internal)?;
    state
        .typesetter
        .render_extra_sheet(set.title.clone(), run_id)
        .await
        .map_err(|e| {
            tracing::error!(error = %e, "the extra answer sheet was not typeset");
            match e {
                crate::typeset::TypesetError::Timeout(_) => ApiError::ServiceUnavailable(
                    "the extra answer sheet was not typeset in time; retry".to_owned(),
                ),
                _ => ApiError::Internal,
            }
        })
}
