package daemon

import (
	"net/http"

	"github.com/tollgatehq/tollgate/daemon/web"
	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/audit"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/users"
)

// dashSignInView is the sign-in and setup pages' body.
type dashSignInView struct {
	Action   string
	CSRF     string
	Email    string
	Merchant bool // ask for the merchant id: the email is several merchants' user
	TwoFA    bool // the daemon requires TOTP
	Error    string
}

// dashSignInForm shows the sign-in form. Its token is bound to a cookie of
// its own, set here, since there is no session yet.
func (s *Server) dashSignInForm(w http.ResponseWriter, r *http.Request) {
	s.renderSignIn(w, r, http.StatusOK, dashSignInView{})
}

func (s *Server) renderSignIn(w http.ResponseWriter, r *http.Request, status int, v dashSignInView) {
	pre := newBrowserToken()
	s.setDashCookie(w, dashSignInCookie, pre, 0)
	v.Action, v.CSRF, v.TwoFA = s.dashBase()+"/sign-in", web.CSRFToken(pre), s.cfg.DashboardRequire2FA
	s.renderDash(w, r, status, dashSignInPage, web.Frame{Title: "Sign in", Product: "dashboard", Body: v})
}

// dashSignIn checks the form and starts a session with a new token (never
// one the browser brought: no session fixation).
func (s *Server) dashSignIn(w http.ResponseWriter, r *http.Request) {
	pre := ""
	if c, err := r.Cookie(dashSignInCookie); err == nil {
		pre = c.Value
	}
	if pre == "" {
		// No form of ours was shown to this browser: its token would be
		// the empty key's, which anyone can compute.
		dropBody(w, r)
		s.dashForbidden(w, r, nil)
		return
	}
	if err := s.forms.Check(w, r, pre); err != nil {
		s.dashForbidden(w, r, err)
		return
	}
	in := users.SignInInput{Email: r.PostForm.Get("email"), Password: r.PostForm.Get("password"), TOTP: r.PostForm.Get("code"),
		MerchantID: r.PostForm.Get("merchant")}
	st, err := users.SignIn(r.Context(), s.db, dashIP(r), in, s.cfg.Clock.Now())
	if err != nil {
		e, status := s.pageError(r, err)
		v := dashSignInView{Email: in.Email, Error: e.Message, Merchant: e.Code == apperr.InvalidRequest}
		if e.Code == apperr.Internal || status == http.StatusServiceUnavailable {
			v.Error = "Signing in is not possible right now; please try again shortly."
		}
		s.renderSignIn(w, r, status, v)
		return
	}
	s.clearDashCookie(w, dashSignInCookie)
	s.setDashCookie(w, dashCookie, st.Token, users.SessionMax)
	http.Redirect(w, r, s.dashBase(), http.StatusSeeOther)
}

// dashSignOut ends the session.
func (s *Server) dashSignOut(w http.ResponseWriter, r *http.Request) {
	d, ok := s.openDashboard(w, r)
	if !ok {
		return
	}
	if err := users.SignOut(r.Context(), s.db, d.ip, d.token, d.now); err != nil {
		s.dashFailure(w, r, err)
		return
	}
	s.clearDashCookie(w, dashCookie)
	http.Redirect(w, r, d.base+"/sign-in", http.StatusSeeOther)
}

// dashSetupForm asks a new user for a password, while the link is usable.
// The form's token is bound to the link's own token.
func (s *Server) dashSetupForm(w http.ResponseWriter, r *http.Request) {
	token := r.PathValue("token")
	u, err := users.SetupUser(r.Context(), s.db, token, s.cfg.Clock.Now())
	if err != nil {
		s.dashSetupGone(w, r, err)
		return
	}
	s.renderSetup(w, r, http.StatusOK, token, dashSignInView{Email: u.Email})
}

func (s *Server) renderSetup(w http.ResponseWriter, r *http.Request, status int, token string, v dashSignInView) {
	v.Action, v.CSRF = s.dashBase()+"/setup/"+token, web.CSRFToken(token)
	s.renderDash(w, r, status, dashSetupPage, web.Frame{Title: "Set your password", Product: "dashboard", Body: v})
}

func (s *Server) dashSetupGone(w http.ResponseWriter, r *http.Request, err error) {
	if apperr.CodeOf(err) != apperr.ResourceNotFound {
		s.dashFailure(w, r, err)
		return
	}
	s.dashMessage(w, r, http.StatusNotFound, web.Message{ID: "setup-invalid", Heading: "This setup link is not valid",
		Paragraphs: []string{"It was used already, or has expired: links work once, for 24 hours. Ask for a new one."}})
}

// dashSetup sets the password and uses the link up; the user then signs in.
func (s *Server) dashSetup(w http.ResponseWriter, r *http.Request) {
	token := r.PathValue("token")
	if err := s.forms.Check(w, r, token); err != nil {
		s.dashForbidden(w, r, err)
		return
	}
	password := r.PostForm.Get("password")
	if password != r.PostForm.Get("confirm") {
		u, err := users.SetupUser(r.Context(), s.db, token, s.cfg.Clock.Now())
		if err != nil {
			s.dashSetupGone(w, r, err)
			return
		}
		s.renderSetup(w, r, http.StatusBadRequest, token, dashSignInView{Email: u.Email, Error: "The two passwords differ."})
		return
	}
	u, err := users.CompleteSetup(r.Context(), s.db, audit.Actor{IP: dashIP(r)}, token, password, s.cfg.Clock.Now())
	switch {
	case apperr.CodeOf(err) == apperr.InvalidRequest:
		s.renderSetup(w, r, http.StatusBadRequest, token, dashSignInView{Email: r.PostForm.Get("email"), Error: err.(*apperr.Error).Message})
		return
	case err != nil:
		s.dashSetupGone(w, r, err)
		return
	}
	s.renderSignIn(w, r, http.StatusOK, dashSignInView{Email: u.Email})
}

// dashMode is the test/live switch.
func (s *Server) dashMode(w http.ResponseWriter, r *http.Request) {
	d, ok := s.openDashboard(w, r)
	if !ok {
		return
	}
	if err := users.SetMode(r.Context(), s.db, d.token, tenant.Mode(r.PostForm.Get("mode"))); err != nil {
		s.dashFailure(w, r, err)
		return
	}
	s.dashDone(w, r, d.base, "mode")
}

// dashSettingsView is the Settings page's body.
type dashSettingsView struct {
	Enrolled bool
	Required bool
	// Enrolment is a secret being enrolled, shown until its first code.
	Enrolment *users.TOTPEnrolment
}

func (s *Server) dashSettings(w http.ResponseWriter, r *http.Request) {
	d, ok := s.openDashboard(w, r)
	if !ok {
		return
	}
	f := d.frame("Settings", "Settings")
	f.Notice = doneNotice(r)
	f.Body = d.page(dashSettingsView{Enrolled: d.TOTPEnrolled, Required: s.cfg.DashboardRequire2FA && !d.TOTPEnrolled})
	s.renderDash(w, r, http.StatusOK, dashSettingsPage, f)
}

// dashTOTPBegin shows a new secret to enter into an authenticator app.
func (s *Server) dashTOTPBegin(w http.ResponseWriter, r *http.Request) {
	d, ok := s.openDashboard(w, r)
	if !ok {
		return
	}
	e, err := users.BeginTOTP(r.Context(), s.db, d.Session)
	if err != nil {
		s.dashFailure(w, r, err)
		return
	}
	f := d.frame("Settings", "Settings")
	f.Body = d.page(dashSettingsView{Enrolled: d.TOTPEnrolled, Enrolment: &e})
	s.renderDash(w, r, http.StatusOK, dashSettingsPage, f)
}

// dashTOTPConfirm enrols the secret when the code is its current one.
func (s *Server) dashTOTPConfirm(w http.ResponseWriter, r *http.Request) {
	d, ok := s.openDashboard(w, r)
	if !ok {
		return
	}
	if err := users.ConfirmTOTP(r.Context(), s.db, d.Session, d.ip, r.PostForm.Get("code"), d.now); err != nil {
		if apperr.CodeOf(err) != apperr.InvalidRequest {
			s.dashFailure(w, r, err)
			return
		}
		f := d.frame("Settings", "Settings")
		f.Notice = dashNotice(err)
		f.Body = d.page(dashSettingsView{Enrolled: d.TOTPEnrolled})
		s.renderDash(w, r, http.StatusBadRequest, dashSettingsPage, f)
		return
	}
	s.dashDone(w, r, d.base+"/settings", "totp")
}
