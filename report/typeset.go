package report

import (
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
)

// powerText is the text handler of log-axis tick labels: "10^-3" is drawn
// as 10 followed by the exponent −3, raised and smaller, in the plot's own
// font. The font (Liberation Serif) has no superscript zero, nine or minus
// (U+2070, U+2079, U+207B), so exponents are typeset with ordinary digits
// and the minus sign U+2212, which it has; a text without '^' is drawn as
// plain text.
type powerText struct{ text.Plain }

// Exponents are drawn at supScale times the font size, their baseline
// supRise times the font size above the base's.
const (
	supScale = 0.7
	supRise  = 0.45
)

func newPowerText() powerText {
	return powerText{text.Plain{Fonts: plot.DefaultTextHandler.Cache()}}
}

// split returns the base and the exponent of txt ("10^-3": "10", "−3"),
// and whether it has one.
func (powerText) split(txt string) (base, exp string, ok bool) {
	base, exp, ok = strings.Cut(txt, "^")
	return base, strings.ReplaceAll(exp, "-", "−"), ok && exp != ""
}

func supFont(f font.Font) font.Font {
	f.Size *= supScale
	return f
}

// Box returns the width, height above the baseline and depth of txt.
func (h powerText) Box(txt string, fnt font.Font) (width, height, depth vg.Length) {
	base, exp, ok := h.split(txt)
	if !ok {
		return h.Plain.Box(txt, fnt)
	}
	bw, bh, bd := h.Plain.Box(base, fnt)
	ew, eh, _ := h.Plain.Box(exp, supFont(fnt))
	return bw + ew, max(bh, fnt.Size*supRise+eh), bd
}

// Draw draws txt at pt, aligned as sty says.
func (h powerText) Draw(c vg.Canvas, txt string, sty text.Style, pt vg.Point) {
	base, exp, ok := h.split(txt)
	if !ok || sty.Rotation != 0 || strings.Contains(txt, "\n") {
		h.Plain.Draw(c, txt, sty, pt)
		return
	}
	w, ht, dp := h.Box(txt, sty.Font)
	x := pt.X + vg.Length(sty.XAlign)*w
	baseline := pt.Y + vg.Length(sty.YAlign)*(ht+dp) + dp
	c.SetColor(sty.Color)
	bf := h.Fonts.Lookup(sty.Font, sty.Font.Size)
	c.FillString(bf, vg.Point{X: x, Y: baseline}, base)
	sf := supFont(sty.Font)
	ef := h.Fonts.Lookup(sf, sf.Size)
	c.FillString(ef, vg.Point{X: x + bf.Width(base), Y: baseline + sty.Font.Size*supRise}, exp)
}

// power labels 10 to the k for powerText: "10^3", "10^-1".
func power(k int) string { return "10^" + strconv.Itoa(k) }
