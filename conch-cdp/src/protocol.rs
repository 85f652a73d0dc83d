//! Typed DevTools commands and events: the subset the project uses, written by hand.
//!
//! A command is a params struct implementing [`Command`] (its method name and its
//! response type); an event is a struct implementing [`Event`]. Field names follow the
//! protocol (camelCase on the wire). Responses ignore fields they do not know, and enums
//! read from the browser keep unknown values as `Other(String)`, so a newer Chrome does not
//! break decoding. For anything not here, use [`crate::Session::call_raw`] and
//! [`crate::Session::events`].

use std::fmt;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

pub mod browser;
pub mod emulation;
pub mod fetch;
pub mod input;
pub mod inspector;
pub mod network;
pub mod page;
pub mod runtime;
pub mod target;

/// A DevTools command: its params (this type, serialised), its method name and its
/// response.
pub trait Command: Serialize {
    /// The method name, such as `"Page.navigate"`.
    const METHOD: &'static str;
    /// What the browser answers.
    type Response: DeserializeOwned;
}

/// A DevTools event: its params (this type) and its method name.
pub trait Event: DeserializeOwned {
    /// The method name, such as `"Page.loadEventFired"`.
    const METHOD: &'static str;
}

/// The response of commands that answer nothing (`{}`); any fields are ignored.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub struct Empty {}

/// A flat session id (`sessionId` on the wire). Cheap to clone.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionId(Arc<str>);

impl SessionId {
    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<&str> for SessionId {
    fn from(id: &str) -> Self {
        SessionId(Arc::from(id))
    }
}

impl From<String> for SessionId {
    fn from(id: String) -> Self {
        SessionId(Arc::from(id))
    }
}

impl fmt::Debug for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SessionId({})", self.0)
    }
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Serialize for SessionId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for SessionId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let id = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
        Ok(SessionId(Arc::from(id.as_ref())))
    }
}

/// Declares a string id newtype.
macro_rules! string_id {
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub String);

        impl $name {
            /// The id as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<&str> for $name {
            fn from(id: &str) -> Self {
                $name(id.to_owned())
            }
        }

        impl From<String> for $name {
            fn from(id: String) -> Self {
                $name(id)
            }
        }
    };
}
pub(crate) use string_id;

string_id!(
    /// A target id (`Target.TargetID`).
    TargetId
);
string_id!(
    /// A browser context id (`Browser.BrowserContextID`).
    BrowserContextId
);
string_id!(
    /// A frame id (`Page.FrameId`).
    FrameId
);

/// Declares a string enum that keeps unknown values as `Other(String)`.
macro_rules! string_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $text:literal, )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )*
            /// A value this client does not know (a newer browser's).
            Other(String),
        }

        impl $name {
            /// The value as the protocol spells it.
            pub fn as_str(&self) -> &str {
                match self {
                    $( $name::$variant => $text, )*
                    $name::Other(other) => other,
                }
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let text = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
                Ok(match text.as_ref() {
                    $( $text => $name::$variant, )*
                    _ => $name::Other(text.into_owned()),
                })
            }
        }
    };
}
pub(crate) use string_enum;

/// Implements [`Command`] for a params struct.
macro_rules! command {
    ($params:ty, $method:literal, $response:ty) => {
        impl $crate::protocol::Command for $params {
            const METHOD: &'static str = $method;
            type Response = $response;
        }
    };
}
pub(crate) use command;

/// Implements [`Event`] for a params struct.
macro_rules! event {
    ($params:ty, $method:literal) => {
        impl $crate::protocol::Event for $params {
            const METHOD: &'static str = $method;
        }
    };
}
pub(crate) use event;
