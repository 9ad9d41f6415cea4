package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/lib/pq"

	"github.com/tollgatehq/tollgate/internal/apperr"
)

// Translate turns driver errors that mean "the database is not there right
// now" into apperr.ServiceUnavailable, so the daemon answers 503 with
// retry-after instead of 500. Other errors pass through unchanged.
func Translate(err error) error {
	if err == nil {
		return nil
	}
	if Unavailable(err) {
		return &apperr.Error{Code: apperr.ServiceUnavailable, Message: "the database is unavailable; retry shortly"}
	}
	return err
}

// Unavailable reports whether err means PostgreSQL cannot be reached or is
// shutting down or starting up.
func Unavailable(err error) bool {
	if err == nil {
		return false
	}
	if apperr.CodeOf(err) == apperr.ServiceUnavailable {
		return true
	}
	var pqErr *pq.Error
	if errors.As(err, &pqErr) {
		switch {
		case pqErr.Code.Class() == "08": // connection exception
			return true
		case pqErr.Code == "57P01", pqErr.Code == "57P02", pqErr.Code == "57P03": // admin shutdown, crash shutdown, cannot connect now
			return true
		case pqErr.Code == "53300": // too many connections
			return true
		}
		return false
	}
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ENOENT) {
		return true
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) {
		return true
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "connection refused") || strings.Contains(msg, "bad connection") ||
		strings.Contains(msg, "the database system is") || strings.Contains(msg, "connection reset")
}

// Retryable reports whether err is PostgreSQL breaking a deadlock
// (40P01) or a serialization conflict (40001): the transaction was rolled
// back and running it again from scratch may succeed. InTx does so; nothing
// else needs to.
func Retryable(err error) bool {
	var pqErr *pq.Error
	return errors.As(err, &pqErr) && (pqErr.Code == "40P01" || pqErr.Code == "40001")
}

// UniqueViolation reports whether err is a unique-constraint violation,
// optionally of the named constraint.
func UniqueViolation(err error, constraint string) bool {
	var pqErr *pq.Error
	if !errors.As(err, &pqErr) || pqErr.Code != "23505" {
		return false
	}
	return constraint == "" || pqErr.Constraint == constraint
}

func oneLine(err error) string {
	return strings.ReplaceAll(err.Error(), "\n", " ")
}
