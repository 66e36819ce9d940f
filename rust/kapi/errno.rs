// SPDX-License-Identifier: GPL-2.0

//! Error codes LNet uses that the 6.12 kernel crate does not name.

use kernel::bindings;
use kernel::error::Error;

macro_rules! errno {
    ($($name:ident),*) => {$(
        #[doc = concat!("`-", stringify!($name), "`")]
        #[allow(non_snake_case)]
        pub fn $name() -> Error {
            Error::from_errno(-(bindings::$name as i32))
        }
    )*};
}

errno!(
    ENETDOWN,
    EHOSTUNREACH,
    EPROTO,
    ETIMEDOUT,
    ESHUTDOWN,
    ECONNREFUSED,
    ECONNRESET,
    EADDRINUSE,
    EOPNOTSUPP,
    ECANCELED,
    ESTALE,
    EALREADY,
    ENETRESET,
    EADDRNOTAVAIL,
    ECONNABORTED,
    ENOTCONN,
    EMSGSIZE,
    EPROTONOSUPPORT,
    ENETUNREACH
);
