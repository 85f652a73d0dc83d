//! The gateway's [`BackendChoice`] (BE-1, BE-2, BE-3): the panel's Settings page keeps
//! the person's choice of browser through the same code as `conch-gateway backend set`
//! ([`crate::backend`]).

use conch_browser::Home;
use conch_browser::remote::Remote;
use conch_browser::seal::{SecretEntry, SecretText};
use conch_browser::store::Backend;
use conch_panel::{BackendChoice, ChoiceError};

/// The backend choice as `conch-gateway backend` keeps it.
#[derive(Debug)]
pub(crate) struct GatewayBackends;

impl BackendChoice for GatewayBackends {
    fn saved(&self, home: &Home) -> Result<Vec<SecretEntry>, ChoiceError> {
        crate::backend::sealed(home)
            .map(|(_, file)| file.inventory())
            .map_err(|e| ChoiceError(e.to_string()))
    }

    fn save(
        &self,
        home: &Home,
        backend: Backend,
        url: Option<String>,
        project: Option<String>,
        key: Option<SecretText>,
    ) -> Result<Vec<String>, ChoiceError> {
        crate::backend::save_choice(home, backend, url, project, key)
            .map_err(|e| ChoiceError(e.to_string()))
    }

    fn remote(&self, home: &Home) -> (Option<Remote>, Option<String>) {
        crate::backend::remote_for(home)
    }

    fn save_pool(
        &self,
        home: &Home,
        endpoints: Vec<String>,
        per_endpoint: Option<String>,
    ) -> Result<Vec<String>, ChoiceError> {
        crate::backend::save_pool(home, endpoints, per_endpoint.as_deref())
            .map_err(|e| ChoiceError(e.to_string()))
    }
}
