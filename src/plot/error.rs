//! What can go wrong when a chart is drawn, one typed error for every chart: plotters
//! refused to draw (a run failure, exit 1), or writing the file failed (its own kind).

use plotters::drawing::DrawingAreaErrorKind;

use crate::output::OutputError;

/// An error of drawing or writing a chart.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PlotError {
    /// plotters refused to draw (a backend or layout error), in its own words.
    #[error("{0}")]
    Draw(String),
    /// Writing the PNG or SVG failed.
    #[error(transparent)]
    Output(#[from] OutputError),
}

/// Every plotters drawing error, whatever the backend, becomes a [`PlotError::Draw`].
impl<E: std::error::Error + Send + Sync> From<DrawingAreaErrorKind<E>> for PlotError {
    fn from(e: DrawingAreaErrorKind<E>) -> Self {
        PlotError::Draw(e.to_string())
    }
}

/// The result of drawing a chart.
pub type Result<T, E = PlotError> = std::result::Result<T, E>;
