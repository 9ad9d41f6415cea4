package pages

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/tui/common"
	"github.com/tollgatehq/tollgate/tui/components"
)

type customerMsg struct {
	query   string
	cus     *client.Customer
	balance *client.CreditBalance
	subs    *client.List[client.Subscription]
	usage   []*client.UsageSummary
	err     error
}

type entitlementMsg struct {
	customer string
	ent      *client.Entitlement
	err      error
}

// Customer looks a customer up and shows credits, an entitlement check and
// subscriptions.
type Customer struct {
	c    *common.Common
	form components.Form

	loading bool
	res     *customerMsg
	ent     *entitlementMsg
	err     string

	width, height int
}

// NewCustomer returns the customer page.
func NewCustomer(c *common.Common) *Customer {
	p := &Customer{c: c}
	p.form.Fields = []*components.Field{
		components.NewField("customer", "Customer", "cus_… or your external customer id", 255),
		components.NewField("feature", "Feature", "feature key to check, e.g. api.calls", 100),
	}
	return p
}

func (p *Customer) Title() string     { return "Customer" }
func (p *Customer) Init() tea.Cmd     { return nil }
func (p *Customer) Capturing() bool   { return p.form.Active() }
func (p *Customer) SetSize(w, h int)  { p.width, p.height = w, h }
func (p *Customer) Activate() tea.Cmd { p.form.Activate(); return nil }

func (p *Customer) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case customerMsg:
		p.loading = false
		if msg.err != nil {
			p.res, p.err = nil, common.ErrorText(msg.err)
			return common.Status(p.err, true)
		}
		p.res, p.err, p.ent = &msg, "", nil
		if strings.TrimSpace(p.form.Fields[1].Input.Value()) != "" {
			return p.check()
		}
		return nil
	case entitlementMsg:
		if p.res == nil || msg.customer != p.res.cus.ID {
			return nil
		}
		p.ent = &msg
		if msg.err != nil {
			return common.Status(common.ErrorText(msg.err), true)
		}
		return nil
	case tea.KeyPressMsg:
		k := p.c.Keys
		if !p.form.Active() {
			if key.Matches(msg, k.Enter) {
				p.form.Activate()
			}
			return nil
		}
		switch {
		case key.Matches(msg, k.Back):
			p.form.Deactivate()
			return nil
		case key.Matches(msg, k.Enter) && p.form.Focus == 0:
			return p.lookup()
		case key.Matches(msg, k.Enter):
			return p.check()
		case key.Matches(msg, k.NextField):
			p.form.Move(1)
			return nil
		case key.Matches(msg, k.PrevField):
			p.form.Move(-1)
			return nil
		}
		return p.form.Update(msg)
	}
	return nil
}

func (p *Customer) lookup() tea.Cmd {
	q := strings.TrimSpace(p.form.Fields[0].Input.Value())
	if q == "" {
		p.form.SetError("customer", "enter a cus_… id or an external customer id")
		return nil
	}
	p.form.ClearErrors()
	p.loading = true
	ctx, c := p.c.Ctx, p.c.Client
	return func() tea.Msg {
		m := customerMsg{query: q}
		if m.cus, m.err = c.GetCustomer(ctx, q); m.err != nil {
			return m
		}
		if m.balance, m.err = c.GetCreditBalance(ctx, m.cus.ID); m.err != nil {
			return m
		}
		if m.subs, m.err = c.ListSubscriptionsFiltered(ctx, client.SubscriptionListParams{ListParams: client.ListParams{Limit: 20}, CustomerID: m.cus.ID}); m.err != nil {
			return m
		}
		m.usage, m.err = usageThisPeriod(ctx, c, m.cus.ID)
		return m
	}
}

func (p *Customer) check() tea.Cmd {
	feature := strings.TrimSpace(p.form.Fields[1].Input.Value())
	switch {
	case p.res == nil:
		return p.lookup()
	case feature == "":
		p.form.SetError("feature", "enter a feature key")
		return nil
	}
	p.form.ClearErrors()
	ctx, c, id := p.c.Ctx, p.c.Client, p.res.cus.ID
	return func() tea.Msg {
		ent, err := c.CheckEntitlement(ctx, id, feature)
		return entitlementMsg{customer: id, ent: ent, err: err}
	}
}

func (p *Customer) View() string {
	st := p.c.Styles
	var b strings.Builder
	b.WriteString(st.Bold.Render("Customer") + "\n\n")
	b.WriteString(p.form.View(st, p.width) + "\n")
	switch {
	case p.loading:
		b.WriteString("  looking up…\n")
	case p.err != "":
		b.WriteString(st.Error.Render(common.Fit("  ✗ "+p.err, p.width)) + "\n")
	case p.res != nil:
		b.WriteString(p.resultView())
	}
	if !p.form.Active() {
		b.WriteString(st.Dim.Render("  enter: edit the lookup"))
	}
	return common.Lines(b.String(), p.height)
}

func (p *Customer) resultView() string {
	st, r := p.c.Styles, p.res
	var b strings.Builder
	line := func(s string) { b.WriteString(common.Fit(s, p.width) + "\n") }
	ext := "no external id"
	if r.cus.ExternalCustomerID != nil {
		ext = "external id " + common.Clean(*r.cus.ExternalCustomerID)
	}
	line("  " + st.Bold.Render(r.cus.ID) + "  " + ext + "  since " + common.Timestamp(r.cus.CreatedAt))
	bal := r.balance
	credits := "  Credits      balance " + common.USDC(bal.Balance)
	if bal.AccountID != "" {
		credits += " · granted " + common.USDC(bal.Granted) + " · consumed " + common.USDC(bal.Consumed)
		if bal.Expired != "" && bal.Expired != "0" {
			credits += " · expired " + common.USDC(bal.Expired)
		}
	} else {
		credits += " · no credit account"
	}
	line(credits)
	if e := p.ent; e != nil {
		if e.err != nil {
			line(st.Error.Render("  Entitlement  " + common.ErrorText(e.err)))
		} else {
			verdict, usage := entitlementText(st, e.ent)
			line("  Entitlement  " + verdict)
			if usage != "" {
				line("               " + usage)
			}
		}
	}
	line("  Usage        this period, by day")
	if len(r.usage) == 0 {
		line(st.Dim.Render("    none"))
	}
	for _, u := range r.usage {
		line("    " + common.Pad(common.Clean(u.MeterKey), 16, false) + " " + Sparkline(u.Windows) + "  " + u.Value + " (" + u.Aggregation + ")")
	}
	n := 0
	if r.subs != nil {
		n = len(r.subs.Data)
	}
	more := ""
	if r.subs != nil && r.subs.HasMore {
		more = "+"
	}
	line(fmt.Sprintf("  Subscriptions (%d%s)", n, more))
	if n == 0 {
		line(st.Dim.Render("    none"))
	}
	for i := 0; i < n; i++ {
		s := r.subs.Data[i]
		// The period end before the plan id, so at 80 columns the id is
		// what gets cut.
		line("    " + s.ID + "  " + st.Status(s.Status).Render(common.Pad(s.Status, 8, false)) + "  " +
			common.Pad(when(p.c, s.CurrentPeriodEnd), 11, false) + "  " + common.Clean(s.PlanID))
	}
	return b.String()
}

// entitlementText is a check's verdict and reason, and its usage (used /
// limit · remaining) when the feature is metered, else "".
func entitlementText(st *common.Styles, e *client.Entitlement) (verdict, usage string) {
	v := "not entitled"
	if e.Entitled {
		v = "entitled"
	}
	verdict = common.Clean(e.Feature) + ": " + st.Status(v).Render(v) + " (" + e.Reason + ")"
	var parts []string
	if e.Used != nil {
		parts = append(parts, "used "+*e.Used)
	}
	if e.Limit != nil {
		parts = append(parts, "limit "+*e.Limit)
	}
	if e.Remaining != nil {
		parts = append(parts, "remaining "+*e.Remaining)
	}
	return verdict, strings.Join(parts, " · ")
}

func (p *Customer) ShortHelp() []key.Binding {
	k := p.c.Keys
	return []key.Binding{key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "look up / check")), k.NextField, k.Back}
}

func (p *Customer) FullHelp() []key.Binding { return append(p.ShortHelp(), p.c.Keys.PrevField) }
