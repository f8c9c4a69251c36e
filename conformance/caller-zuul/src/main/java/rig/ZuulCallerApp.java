package rig;

import java.io.BufferedWriter;
import java.io.FileWriter;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Method;
import java.net.ConnectException;
import java.net.HttpURLConnection;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import com.netflix.client.config.IClientConfig;
import com.netflix.loadbalancer.ILoadBalancer;
import com.netflix.loadbalancer.Server;
import com.netflix.zuul.ZuulFilter;
import com.netflix.zuul.context.RequestContext;
import org.apache.http.Header;
import org.apache.http.client.methods.RequestBuilder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.cloud.netflix.ribbon.SpringClientFactory;
import org.springframework.cloud.netflix.ribbon.support.RibbonRequestCustomizer;
import org.springframework.cloud.netflix.zuul.EnableZuulProxy;
import org.springframework.cloud.netflix.zuul.filters.ZuulProperties;
import org.springframework.cloud.netflix.zuul.filters.route.RibbonCommandFactory;
import org.springframework.cloud.netflix.zuul.filters.route.support.AbstractRibbonCommand;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

/**
 * Zuul caller (Spring Cloud Hoxton.SR12): a Zuul 1 proxy ({@code @EnableZuulProxy}) on its own
 * port with one route, zuul.routes.svc (path /svc/**, service-id svc), every Zuul, Ribbon and
 * Hystrix setting at its default: zuul.retryable=false and no spring-retry (one attempt per
 * request: RibbonLoadBalancingHttpClient#getRequestSpecificRetryHandler(false, false, ...)),
 * semaphore isolation, Hystrix timeout from AbstractRibbonCommand#getHystrixTimeout =
 * (ReadTimeout + ConnectTimeout) x (MaxAutoRetries + 1) x (MaxAutoRetriesNextServer + 1) =
 * 4000 ms at Ribbon's defaults (logged). An in-process driver sends, every period-ms on a pool
 * thread, one GET /svc/ping to the proxy's own port (127.0.0.1, a new connection each time) and
 * logs the proxy's answer: 200 -> ok, else http_<code>; a failure whose cause is Ribbon's "Load
 * balancer does not have available server" (no instance was chosen; noted by an "error"
 * ZuulFilter) -> no_instance.
 *
 * Chosen instance and connections: a RibbonRequestCustomizer (for Apache's RequestBuilder, the
 * default Zuul-to-service client) is applied by RibbonApacheHttpRequest#toRequest to every
 * request Zuul sends to a service, after Ribbon's LoadBalancerCommand chose the server and the URI
 * was rewritten to it. It maps the URI's host:port to the Eureka instance id through the Ribbon
 * load balancer's server list and files it under the driver's X-Rig-Seq header, and sets
 * "Connection: close", so the pooled Apache client never reuses a connection (a new TCP
 * connection per request, like the other rig callers).
 */
@SpringBootApplication
@EnableZuulProxy
public class ZuulCallerApp implements ApplicationRunner {
    private static final Logger log = LoggerFactory.getLogger(ZuulCallerApp.class);
    static final String SEQ = "X-Rig-Seq";
    /** X-Rig-Seq -> instance id of the server Ribbon chose for that request. */
    static final Map<String, String> CHOSEN = new ConcurrentHashMap<>();
    /** X-Rig-Seq of the requests Ribbon found no server for. */
    static final Map<String, Boolean> NO_SERVER = new ConcurrentHashMap<>();

    private final ApplicationContext ctx;
    private final Environment env;
    private final AtomicLong seq = new AtomicLong();

    @Value("${caller.log-file:caller.csv}") String logFile;
    @Value("${caller.period-ms:50}") long periodMs;
    @Value("${caller.service-id:svc}") String serviceId;
    @Value("${caller.connect-timeout-ms:500}") int connectTimeoutMs;
    /** Driver -> proxy read time-out: long, so the proxy's own answer is what gets logged. */
    @Value("${caller.proxy-read-timeout-ms:10000}") int readTimeoutMs;
    @Value("${caller.pool-size:64}") int poolSize;
    @Value("${caller.ribbon-probe-ms:0}") long probeMs;
    @Value("${caller.ribbon-probe-file:caller-ribbon-probe.csv}") String probeFile;

    private BufferedWriter out;
    private String base;

    public ZuulCallerApp(ApplicationContext ctx, Environment env) {
        this.ctx = ctx;
        this.env = env;
    }

    public static void main(String[] args) {
        // The driver's connections to the proxy: a new TCP connection per request.
        System.setProperty("http.keepAlive", "false");
        SpringApplication.run(ZuulCallerApp.class, args);
    }

    /** The beans of the proxy (in a class of their own). */
    @Configuration(proxyBeanMethods = false)
    static class Beans {
        @Bean
        RibbonRequestCustomizer<RequestBuilder> noteChosenInstance(SpringClientFactory clients) {
            return new RibbonRequestCustomizer<RequestBuilder>() {
                @Override
                public boolean accepts(Class builderClass) {
                    return RequestBuilder.class.isAssignableFrom(builderClass);
                }

                @Override
                public void customize(RequestBuilder builder) {
                    builder.setHeader("Connection", "close");
                    Header s = builder.getFirstHeader(SEQ);
                    URI uri = builder.getUri();
                    if (s == null || uri == null) {
                        return;
                    }
                    String hostPort = uri.getHost() + ":" + uri.getPort();
                    String id = hostPort;
                    ILoadBalancer lb = clients.getLoadBalancer(serviceIdOf(builder));
                    if (lb != null) {
                        for (Server sv : lb.getAllServers()) {
                            if (sv.getHostPort().equals(hostPort)) {
                                id = RibbonProbe.id(sv);
                                break;
                            }
                        }
                    }
                    CHOSEN.put(s.getValue(), id);
                }
            };
        }
    }

    /**
     * An "error" ZuulFilter ordered before SendErrorFilter (0): notes the requests whose routing
     * failed because Ribbon had no server (LoadBalancerCommand's ClientException "Load balancer
     * does not have available server for client"); Boot 2.3's error body hides that message.
     */
    @Bean
    ZuulFilter noteNoServer() {
        return new ZuulFilter() {
            @Override
            public String filterType() {
                return "error";
            }

            @Override
            public int filterOrder() {
                return -1;
            }

            @Override
            public boolean shouldFilter() {
                return true;
            }

            @Override
            public Object run() {
                RequestContext rc = RequestContext.getCurrentContext();
                String s = rc.getRequest() == null ? null : rc.getRequest().getHeader(SEQ);
                for (Throwable c = rc.getThrowable(); c != null && s != null; c = c.getCause() == c ? null : c.getCause()) {
                    if (c.getMessage() != null && c.getMessage().contains("does not have available server")) {
                        NO_SERVER.put(s, Boolean.TRUE);
                        break;
                    }
                }
                return null;
            }
        };
    }

    /** The route has one service; the customizer is called for it only. */
    static String serviceIdOf(RequestBuilder builder) {
        return "svc";
    }

    @Override
    public void run(ApplicationArguments args) throws Exception {
        ZuulProperties zp = ctx.getBean(ZuulProperties.class);
        SpringClientFactory clients = ctx.getBean(SpringClientFactory.class);
        IClientConfig cfg = clients.getClientConfig(serviceId);
        Object hystrixTimeout;
        try {
            Method m = AbstractRibbonCommand.class.getDeclaredMethod("getHystrixTimeout", IClientConfig.class, String.class);
            m.setAccessible(true);
            hystrixTimeout = m.invoke(null, cfg, serviceId);
        } catch (ReflectiveOperationException e) {
            hystrixTimeout = "n/a (" + e + ")";
        }
        log.info("RIG zuul routes={} retryable={} route.retryable={} ribbonIsolationStrategy={} semaphore.maxSemaphores={} "
                        + "ribbonCommandFactory={} hystrixTimeout(AbstractRibbonCommand#getHystrixTimeout)={}ms "
                        + "spring-retry present={} zuul-to-service client=Apache RequestBuilder + Connection: close",
                zp.getRoutes().values(), zp.getRetryable(),
                zp.getRoutes().containsKey(serviceId) ? zp.getRoutes().get(serviceId).getRetryable() : null,
                zp.getRibbonIsolationStrategy(), zp.getSemaphore().getMaxSemaphores(),
                ctx.getBean(RibbonCommandFactory.class).getClass().getName(), hystrixTimeout,
                ClassUtils.isPresent("org.springframework.retry.support.RetryTemplate", null));
        base = "http://127.0.0.1:" + env.getProperty("local.server.port") + "/" + serviceId + "/ping";
        out = new BufferedWriter(new FileWriter(logFile, true), 1 << 16);
        ExecutorService pool = Executors.newFixedThreadPool(poolSize, r -> {
            Thread t = new Thread(r, "rig-req");
            t.setDaemon(true);
            return t;
        });
        ScheduledExecutorService sched = Executors.newScheduledThreadPool(2);
        sched.scheduleAtFixedRate(() -> pool.execute(this::oneRequest), 0, periodMs, TimeUnit.MILLISECONDS);
        sched.scheduleAtFixedRate(this::flush, 50, 50, TimeUnit.MILLISECONDS);
        // Zuul's load balancer and HTTP client are created by the first request; describe them then.
        sched.schedule(() -> {
            RibbonProbe.describe(clients, serviceId);
            Object client = clients.getInstance(serviceId, com.netflix.client.AbstractLoadBalancerAwareClient.class);
            log.info("RIG zuul ribbon client={}", client == null ? "null" : client.getClass().getName());
        }, 5, TimeUnit.SECONDS);
        if (probeMs > 0) {
            RibbonProbe.start(clients, serviceId, probeMs, probeFile);
        }
        log.info("RIG caller started: period={}ms url={} log={}", periodMs, base, logFile);
    }

    private synchronized void write(String line) {
        try {
            out.write(line);
            out.write('\n');
        } catch (IOException e) {
            log.error("log write failed", e);
        }
    }

    private synchronized void flush() {
        try {
            out.flush();
        } catch (IOException e) {
            log.error("log flush failed", e);
        }
    }

    private void oneRequest() {
        long send = System.currentTimeMillis();
        long t0 = System.nanoTime();
        String s = Long.toString(seq.incrementAndGet());
        String outcome;
        try {
            HttpURLConnection c = (HttpURLConnection) URI.create(base).toURL().openConnection();
            c.setConnectTimeout(connectTimeoutMs);
            c.setReadTimeout(readTimeoutMs);
            c.setUseCaches(false);
            c.setRequestProperty(SEQ, s);
            try {
                int code = c.getResponseCode();
                InputStream is = code < 400 ? c.getInputStream() : c.getErrorStream();
                if (is != null) {
                    is.readAllBytes();
                    is.close();
                }
                outcome = code == 200 ? "ok"
                        : !CHOSEN.containsKey(s) && NO_SERVER.containsKey(s) ? "no_instance"
                        : "http_" + code;
            } finally {
                c.disconnect();
            }
        } catch (ConnectException e) {
            outcome = "refused";
        } catch (SocketTimeoutException e) {
            outcome = "timeout";
        } catch (Throwable e) {
            outcome = "error_" + e.getClass().getSimpleName();
        }
        String chosen = CHOSEN.remove(s);
        NO_SERVER.remove(s);
        long lat = (System.nanoTime() - t0) / 1_000_000L;
        write(send + "," + (chosen == null ? "" : chosen) + "," + outcome + "," + lat);
    }
}
