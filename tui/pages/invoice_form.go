package pages

import (
	"errors"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/tui/common"
	"github.com/tollgatehq/tollgate/tui/components"
)

// InvoiceCreatedMsg announces a new invoice, so lists can show it.
type InvoiceCreatedMsg struct{ Invoice *client.Invoice }

type invoiceResultMsg struct {
	inv *client.Invoice
	err error
}

// InvoiceForm creates an invoice.
type InvoiceForm struct {
	c       *common.Common
	form    components.Form
	sending bool
	created *client.Invoice
	err     string

	width, height int
}

// NewInvoiceForm returns the form page.
func NewInvoiceForm(c *common.Common) *InvoiceForm {
	p := &InvoiceForm{c: c}
	p.form.Fields = []*components.Field{
		components.NewField("amount", "Amount (USDC)", "e.g. 12.50", 40),
		components.NewField("description", "Description", "required; shown on the checkout page", 500),
		components.NewField("memo", "Memo", "optional", 200),
		components.NewField("due_at", "Due date", "optional: YYYY-MM-DD or RFC 3339", 40),
	}
	return p
}

func (p *InvoiceForm) Title() string      { return "New invoice" }
func (p *InvoiceForm) Init() tea.Cmd      { return nil }
func (p *InvoiceForm) Capturing() bool    { return p.form.Active() }
func (p *InvoiceForm) SetSize(w, h int)   { p.width, p.height = w, h }
func (p *InvoiceForm) Activate() tea.Cmd  { p.form.Activate(); return nil }
func (p *InvoiceForm) value(i int) string { return strings.TrimSpace(p.form.Fields[i].Input.Value()) }

func (p *InvoiceForm) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case invoiceResultMsg:
		p.sending = false
		if msg.err != nil {
			return p.apiError(msg.err)
		}
		p.created = msg.inv
		for _, f := range p.form.Fields {
			f.Input.SetValue("")
		}
		p.form.Focus = 0
		p.form.Activate()
		inv := msg.inv
		return tea.Batch(common.Status("created "+inv.ID, false), func() tea.Msg { return InvoiceCreatedMsg{Invoice: inv} })
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
		case key.Matches(msg, k.Submit), key.Matches(msg, k.Enter) && p.form.Last():
			return p.submit()
		case key.Matches(msg, k.Enter), key.Matches(msg, k.NextField):
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

// submit checks what can be checked here, then sends the invoice.
func (p *InvoiceForm) submit() tea.Cmd {
	if p.sending {
		return nil
	}
	p.form.ClearErrors()
	p.err, p.created = "", nil
	params := client.InvoiceParams{Description: p.value(1), Memo: p.value(2)}
	ok := true
	amount, err := common.ParseUSDC(p.value(0))
	if err != nil {
		p.form.SetError("amount", err.Error())
		ok = false
	}
	params.Amount = amount
	if due := p.value(3); due != "" {
		t, err := ParseDue(due)
		if err != nil {
			p.form.SetError("due_at", err.Error())
			ok = false
		}
		params.DueAt = &t
	}
	if !ok {
		return nil
	}
	p.sending = true
	ctx, c := p.c.Ctx, p.c.Client
	return func() tea.Msg {
		inv, err := c.CreateInvoice(ctx, params)
		return invoiceResultMsg{inv: inv, err: err}
	}
}

// apiError puts an API validation error on the field it names.
func (p *InvoiceForm) apiError(err error) tea.Cmd {
	var apiErr *client.Error
	if errors.As(err, &apiErr) && apiErr.Code == client.CodeInvalidRequest {
		if field, msg, ok := strings.Cut(apiErr.Message, ":"); ok && p.form.SetError(strings.TrimSpace(field), strings.TrimSpace(msg)) {
			return common.Status("the API refused the invoice: "+common.Clean(apiErr.Message), true)
		}
	}
	p.err = common.ErrorText(err)
	return common.Status(p.err, true)
}

// ParseDue reads a due date: YYYY-MM-DD (end of that day, UTC) or an RFC
// 3339 date-time.
func ParseDue(s string) (time.Time, error) {
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t.Add(24*time.Hour - time.Second), nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Time{}, errors.New("use YYYY-MM-DD or a date-time like 2026-07-01T12:00:00Z")
}

func (p *InvoiceForm) View() string {
	st := p.c.Styles
	var b strings.Builder
	b.WriteString(st.Bold.Render("New invoice") + "\n\n")
	b.WriteString(p.form.View(st, p.width) + "\n")
	switch {
	case p.sending:
		b.WriteString("  creating…\n")
	case p.err != "":
		b.WriteString(st.Error.Render(common.Fit("  ✗ "+p.err, p.width)) + "\n")
	case p.created != nil:
		inv := p.created
		b.WriteString(st.OK.Render("  ✓ created "+inv.ID) + "  " + common.USDC(inv.Amount) + "  " + st.Status(inv.Status).Render(inv.Status) + "\n")
		b.WriteString("  checkout URL:\n  " + common.Clean(inv.CheckoutURL) + "\n")
	}
	if p.form.Active() {
		b.WriteString("\n" + st.Dim.Render("  enter: next field, submit on the last · ctrl+s: submit · esc: leave the form"))
	} else {
		b.WriteString("\n" + st.Dim.Render("  enter: edit the form"))
	}
	return common.Lines(b.String(), p.height)
}

func (p *InvoiceForm) ShortHelp() []key.Binding {
	k := p.c.Keys
	return []key.Binding{k.NextField, k.PrevField, k.Submit, k.Back}
}

func (p *InvoiceForm) FullHelp() []key.Binding { return p.ShortHelp() }
