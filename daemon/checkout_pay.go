package daemon

import (
	"encoding/json"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/checkout"
	"github.com/tollgatehq/tollgate/internal/fields"
)

// checkoutPay serves POST /checkout/{id}/pay: the customer pays an invoice
// (inv_…) or subscribes to a plan (price_…) with the form's payer wallet.
// A browser is sent (303) to the page again, which then shows the receipt
// or the subscription; a request with Accept: application/json gets the
// payment or the subscription, or the error envelope (402 payment_failed,
// 409 invoice_not_open or already_subscribed, 404 resource_not_found).
func (s *Server) checkoutPay(w http.ResponseWriter, r *http.Request) {
	wantsJSON := acceptsJSON(r)
	id := r.PathValue("id")
	in, err := s.decodePayForm(w, r)
	if err == nil {
		switch {
		case strings.HasPrefix(id, "inv_"):
			pay, _, perr := s.money.checkout.PayInvoice(r.Context(), id, in)
			if err = perr; err == nil {
				if wantsJSON {
					writeJSON(w, http.StatusOK, pay.Wire())
				} else {
					http.Redirect(w, r, s.pagePath(id), http.StatusSeeOther)
				}
				return
			}
		case strings.HasPrefix(id, "price_"):
			x, serr := s.money.checkout.Subscribe(r.Context(), id, in)
			if err = serr; err == nil {
				if wantsJSON {
					writeJSON(w, http.StatusOK, x.Wire())
				} else {
					http.Redirect(w, r, s.pagePath(id)+"?subscription="+url.QueryEscape(x.ID), http.StatusSeeOther)
				}
				return
			}
		case reauthorizing(id, r.URL.Query()):
			x, cerr := s.confirmChange(r.Context(), id, r.URL.Query(), in)
			if err = cerr; err == nil {
				s.confirmChangeAnswer(w, r, x, wantsJSON)
				return
			}
		default:
			err = apperr.New(apperr.ResourceNotFound, "no invoice or plan %q", truncate(id, 80))
		}
	}
	if wantsJSON {
		writeError(w, r, s.log, err)
		return
	}
	ext, coupon := r.URL.Query().Get("external_customer_id"), r.URL.Query().Get("coupon")
	if in.ExternalCustomerID != nil {
		ext = *in.ExternalCustomerID
	}
	if in.Coupon != nil {
		coupon = *in.Coupon
	}
	s.renderCheckout(w, r, id, ext, coupon, err)
}

func acceptsJSON(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		mt, _, _ := mime.ParseMediaType(strings.TrimSpace(part))
		if mt == "application/json" {
			return true
		}
	}
	return false
}

// decodePayForm reads the pay form: form-encoded (browsers) or JSON. The
// external_customer_id and the coupon may also come from the page URL's
// query (?coupon=CODE), which the page carries into its form. Other form
// fields (a submit button's name, say) are ignored.
func (s *Server) decodePayForm(w http.ResponseWriter, r *http.Request) (checkout.Input, error) {
	body, err := readBody(w, r, 64<<10)
	if err != nil {
		return checkout.Input{}, err
	}
	var o *fields.Object
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "application/json" {
		if o, err = fields.Decode(body); err != nil {
			return checkout.Input{}, err
		}
	} else {
		form, err := url.ParseQuery(string(body))
		if err != nil {
			return checkout.Input{}, apperr.New(apperr.InvalidRequest, "the form is not valid application/x-www-form-urlencoded")
		}
		raw := map[string]json.RawMessage{}
		for _, name := range []string{"payer", "external_customer_id", "coupon"} {
			v := form.Get(name)
			if v == "" && name != "payer" {
				v = r.URL.Query().Get(name)
			}
			// json.Marshal would quietly replace invalid UTF-8.
			if problem := fields.TextProblem(v); problem != "" {
				return checkout.Input{}, apperr.Field(name, "%s", problem)
			}
			if v != "" {
				b, _ := json.Marshal(v)
				raw[name] = b
			}
		}
		o = fields.FromMap(raw)
	}
	return checkout.Decode(o)
}
